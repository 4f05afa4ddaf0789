"""What every page of the book uses: text formats (``formats``), notebook display (``display``),
the figure style (``figure_style``), the exercise checker (``exercises``), the training loop
(``training``) and the measurements both worked examples share (``worked_example``).
"""
