"""What every page of the book uses: text formats (``formats``), notebook display (``display``),
the figure style (``figure_style``), the exercise checker (``exercises``), the training loop
(``training``) with its optimiser (``optim``: Adam), settings of a lab (``settings``) and the measurements
both worked examples share (``worked_example``).
"""
