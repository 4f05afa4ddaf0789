"""Everything behind chapter 31's pages: the worked example and its command line (``example``),
the lesson's experiments (``lesson``), the depth lab (``depth_lab``, ``gradient_gain``), the
training lab (``training_lab``), the figures (``figures``), the historical contrasts
(``contrasts``) and the checked exercises (``exercises``).
"""
