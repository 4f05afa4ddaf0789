"""Проверяемые упражнения глав 30 и 31.

В ячейке блокнота::

    from llm_from_scratch.exercises import ch30
    ch30.describe_exercise_1()          # условие, формат ответа и шаблон
    answer = {1: ..., 2: ..., 3: ..., 4: ..., 6: ...}
    ch30.check_exercise_1(answer)       # Feedback: что верно, что нет, подсказка

Модули используют только NumPy и стандартную библиотеку.
"""

from . import ch30, ch31
from .feedback import Feedback, ItemResult

__all__ = ["Feedback", "ItemResult", "ch30", "ch31"]
