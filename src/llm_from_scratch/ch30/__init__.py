"""Everything behind chapter 30's pages: the worked example and its command line (``example``),
the lesson's experiments (``lesson``), the learned-heads page (``learned_heads``), the figures
(``figures``), the historical contrasts (``contrasts``) and the checked exercises (``exercises``).
"""
