"""Russian labels that the extensions' own catalogs lack.

sphinx-exercise translates "Solution to" as «Решение к», which gives the
ungrammatical «Решение к Упражнение (30.1)», and has no entry for
"Solution". The book puts each solution right under its exercise
(``exercise_style: solution_follow_exercise``), so the title is one word,
«Решение», added here in front of the extension's own catalog.
"""

from __future__ import annotations

import gettext

from sphinx.application import Sphinx
from sphinx.locale import translators

LABELS = {"exercise": {"Solution": "Решение"}}


class Labels(gettext.NullTranslations):
    """Our labels first, then the catalog we put in front of."""

    def __init__(self, labels: dict[str, str], catalog: gettext.NullTranslations) -> None:
        super().__init__()
        self.labels = labels
        self.add_fallback(catalog)

    def gettext(self, message: str) -> str:
        return self.labels.get(message) or super().gettext(message)


def install(app: Sphinx) -> None:
    if app.config.language != "ru":
        return
    for catalog, labels in LABELS.items():
        key = ("general", catalog)
        translators[key] = Labels(labels, translators.get(key, gettext.NullTranslations()))


def setup(app: Sphinx) -> dict:
    app.connect("builder-inited", install)
    return {"parallel_read_safe": True, "parallel_write_safe": True}
