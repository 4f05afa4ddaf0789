"""Checked exercises of chapters 30 and 31: ``from llm_from_scratch.exercises import ch30 as ex30``,
then ``ex30.check_1(answer)`` prints feedback and ``ex30.EXERCISES[1].feedback(answer)`` returns it.

The chapter modules are not imported here: ``python -m llm_from_scratch.exercises.ch30`` then runs
without runpy's warning about a module found in ``sys.modules`` before it runs.
"""
