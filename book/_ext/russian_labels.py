"""Each edition's labels (the ``language`` of its config): the Russian ones
that the extensions' own catalogs lack, the English figure label, and figure
and exercise numbers by chapter.

sphinx-exercise translates "Solution to" as «Решение к», which gives the
ungrammatical «Решение к Упражнение (30.1)», and has no entry for
"Solution". The book puts each solution right under its exercise
(``exercise_style: solution_follow_exercise``), so the title is one word,
«Решение», added here in front of the extension's own catalog.

Sphinx numbers figures across the whole book, so the first figure of
chapter 31 would be «Рис. 8». A reader expects «Рис. 31.1»: the chapter
number comes from the page name (``book/ch31-...``), then the figure's place
in that chapter. Captions and ``{numref}`` references both read these numbers.

The English edition needs no catalog: sphinx-exercise's own «Solution» is the
title, and a figure's label is «Figure 30.1» (Sphinx's English «Fig. %s»
becomes «Figure %s», the word the English texts use).

Exercises are numbered by chapter too: ``:nonumber:`` and the number as the
title (sphinx-exercise numbers across the book). sphinx-exercise puts a title
in parentheses after its label, «Упражнение (30.1)»; a title that is a number
loses them here, «Упражнение 30.1», as the checks call the exercise (the PDF
is printed from these pages).
"""

from __future__ import annotations

import gettext
import re

from docutils import nodes
from sphinx.application import Sphinx
from sphinx.environment import BuildEnvironment
from sphinx.locale import translators
from sphinx.transforms.post_transforms import SphinxPostTransform
from sphinx_exercise.nodes import exercise_node

LABELS = {"exercise": {"Solution": "Решение"}}
# The figure label of an edition whose Sphinx default is not the book's word.
FIGURE_LABELS = {"en": "Figure %s"}
# The theme's template strings that Sphinx's and the theme's Russian catalogs
# lack: consulted only for messages no catalog translates.
THEME_LABELS = {
    "Color mode": "Цветовая схема",
    "System Settings": "Как в системе",
    "Light": "Светлая",
    "Dark": "Тёмная",
    "Back to top": "Наверх",
    "Main": "Основное",
    "Page": "Страница",
    "Version warning": "Предупреждение о версии",
    "Toggle primary sidebar": "Показать или скрыть содержание книги",
    "Toggle secondary sidebar": "Показать или скрыть содержание страницы",
    "Skip to main content": "Перейти к тексту",
    # book/_templates/toggle-*-sidebar.html: the two sidebar buttons' tooltips.
    "Book contents": "Содержание книги",
    "Page contents": "Содержание страницы",
}
CHAPTER_PAGE = re.compile(r"(?:^|/)ch(\d+)-")
EXERCISE_NUMBER = re.compile(r"\d+(\.\d+)*")


class Labels(gettext.NullTranslations):
    """Our labels first, then the catalog we put in front of."""

    def __init__(self, labels: dict[str, str], catalog: gettext.NullTranslations) -> None:
        super().__init__()
        self.labels = labels
        self.add_fallback(catalog)

    def gettext(self, message: str) -> str:
        return self.labels.get(message) or super().gettext(message)


class Fallback(gettext.NullTranslations):
    def __init__(self, labels: dict[str, str]) -> None:
        super().__init__()
        self.labels = labels

    def gettext(self, message: str) -> str:
        return self.labels.get(message, message)


def figure_label(app: Sphinx, config) -> None:
    """«Figure 30.1»: after Sphinx has filled numfig_format from the language (priority 800)."""
    label = FIGURE_LABELS.get(config.language)
    if label is not None:
        config.numfig_format["figure"] = label


def install(app: Sphinx) -> None:
    if app.config.language != "ru":
        return
    for catalog, labels in LABELS.items():
        key = ("general", catalog)
        translators[key] = Labels(labels, translators.get(key, gettext.NullTranslations()))
    # The templates already hold app.translator: extend its fallback chain.
    app.translator.add_fallback(Fallback(THEME_LABELS))


def number_by_chapter(app: Sphinx, env: BuildEnvironment) -> list[str]:
    """Renumber the figures (and tables) of each chapter's pages as chapter.index.

    A chapter is its main page and its section pages (``book/ch30-...``), in
    the order of ``_toc.yml``. Sphinx has numbered every figure across the book
    in that order, so sorting a chapter's figures by that number gives each one
    its place in the chapter: the first figure of a section page continues from
    the last one of the page before it.
    """
    by_chapter: dict[tuple[int, str], list[tuple[tuple[int, ...], dict, str]]] = {}
    for docname, numbers_by_type in env.toc_fignumbers.items():
        page = CHAPTER_PAGE.search(docname)
        if page is None:
            continue
        for kind, numbers in numbers_by_type.items():
            for figure_id, number in numbers.items():
                by_chapter.setdefault((int(page[1]), kind), []).append((number, numbers, figure_id))
    for (chapter, _kind), figures in by_chapter.items():
        for place, (_number, numbers, figure_id) in enumerate(sorted(figures, key=lambda f: f[0]), start=1):
            numbers[figure_id] = (chapter, place)
    return []


class ExerciseNumbers(SphinxPostTransform):
    """«Упражнение 30.1» for an unnumbered exercise whose title is its number."""

    default_priority = 25  # after sphinx-exercise's titles (20) and solutions' (21)

    def run(self) -> None:
        for exercise in self.document.findall(exercise_node):
            title = exercise.children[0] if exercise.children else None
            if not isinstance(title, nodes.title) or len(title.children) != 4:
                continue
            _label, opening, number, closing = title.children
            if (opening.astext(), closing.astext()) == (" (", ")") and EXERCISE_NUMBER.fullmatch(number.astext()):
                title.replace(opening, nodes.Text(" "))
                title.remove(closing)


def setup(app: Sphinx) -> dict:
    app.connect("config-inited", figure_label, priority=900)
    app.connect("builder-inited", install)
    # After Sphinx's own numbering (the toctree collector, priority 500).
    app.connect("env-get-updated", number_by_chapter, priority=900)
    app.add_post_transform(ExerciseNumbers)
    return {"parallel_read_safe": True, "parallel_write_safe": True}
