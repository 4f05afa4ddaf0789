"""Figures of chapters 30 and 31: ``plots.ch30`` and ``plots.ch31``, one function per figure.

Each function takes data and returns a ``matplotlib.figure.Figure`` built with
``plots.style`` (no pyplot), so a notebook shows it and a test reads its data.
"""
