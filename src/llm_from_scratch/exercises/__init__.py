"""Checked exercises: ``from llm_from_scratch.exercises import ch30 as ex30``, then ``ex30.check_1(answer)``;
the chapters are not imported here, so ``python -m llm_from_scratch.exercises.ch30`` runs without runpy's warning.
"""
