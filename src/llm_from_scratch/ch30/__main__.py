"""``python -m llm_from_scratch.ch30 [--trace]``: the chapter's learner report, or its diagram trace."""

from ..book.worked_example import chapter_main

raise SystemExit(chapter_main(__package__, "Chapter 30: causal multi-head attention, learner report"))
