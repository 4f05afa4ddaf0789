"""``python -m llm_from_scratch.ch31 [--trace]``: the chapter's learner report, or its diagram trace."""

import sys

from ..errors import EditionError
from ..text import edition

try:   # an unknown LLM_FROM_SCRATCH_EDITION ends the command here, in one line, before any work
    edition()
    from .example import main
except EditionError as error:
    sys.exit(f"python -m {__package__}: {error}")
raise SystemExit(main())
