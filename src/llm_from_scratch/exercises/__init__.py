"""Checked exercises of chapters 30 and 31 (``checking.py`` is their framework).

In a notebook cell::

    from llm_from_scratch.exercises import ch30 as ex30
    answer = {...}
    ex30.check_1(answer)   # prints what is right, what is not, and a hint

``ex30.EXERCISES[1].feedback(answer)`` returns the same feedback as an object.
"""

from . import ch30, ch31
from .checking import Exercise, Feedback, ItemResult

__all__ = ["Exercise", "Feedback", "ItemResult", "ch30", "ch31"]
