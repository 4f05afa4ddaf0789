"""``python -m llm_from_scratch.ch31 [--trace]``: the chapter's learner report, or its diagram trace."""

from .example import main

raise SystemExit(main())
