"""Helpers shared by the exercise-checker tests of both chapters."""

from __future__ import annotations

from llm_from_scratch.exercises.feedback import Feedback

INTERNAL_ERROR = "внутренняя ошибка"


def check(module, number: int, answer: object) -> Feedback:
    """Run a chapter's check; it must return Feedback and never hit its internal-error fallback."""
    feedback = module.EXERCISES[number].check(answer)
    assert isinstance(feedback, Feedback)
    assert INTERNAL_ERROR not in str(feedback)
    return feedback


def with_value(module, number: int, key: object, value: object) -> dict:
    """The seed's answer with one field replaced."""
    answer = dict(module.EXERCISES[number].solution())
    answer[key] = value
    return answer


def assert_rejected(feedback: Feedback, *fragments: str) -> None:
    text = str(feedback)
    assert feedback.correct is False, text
    assert feedback.placeholder is False, text
    for fragment in fragments:
        assert fragment in text, f"{fragment!r} not in:\n{text}"
