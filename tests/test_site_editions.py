"""The English edition's config and toc are the Russian edition's (issue 29).

``book/en/_config.yml`` and ``book/en/_toc.yml`` are checked-in copies of the
repository's ``_config.yml`` and ``_toc.yml`` for the English build, whose
source folder is ``book/en`` (README: «Two editions»). They may differ from
the Russian ones only where an edition speaks its language (title, language,
labels, search words, footer, PDF metadata and file name, the link to the
other edition) and in paths, which are written from ``book/en`` and must name
the same files. The toc lists the same pages in the same order.
"""

from __future__ import annotations

from pathlib import Path

import yaml

REPO = Path(__file__).resolve().parents[1]
EN = REPO / "book" / "en"

# The keys that are an edition's language, as paths into the config.
LANGUAGE_KEYS = {
    ("title",),
    ("sphinx", "config", "language"),
    ("sphinx", "config", "nb_code_prompt_show"),
    ("sphinx", "config", "nb_code_prompt_hide"),
    ("sphinx", "config", "book_pdf_filename"),
    ("sphinx", "config", "book_pdf_author"),
    ("sphinx", "config", "book_pdf_subject"),
    ("sphinx", "config", "book_search_synonyms"),
    ("sphinx", "config", "book_other_edition"),
    ("sphinx", "config", "html_theme_options", "extra_footer"),
    ("sphinx", "config", "html_theme_options", "search_bar_text"),
    ("sphinx", "config", "html_theme_options", "toc_title"),
}
# Paths: relative to the config's folder (local extensions) or to the source folder
# (the rest); both are the repository's root for the Russian build and book/en for the English.
PATH_KEYS = {
    ("bibtex_bibfiles",),
    ("sphinx", "local_extensions"),
    ("sphinx", "config", "templates_path"),
    ("sphinx", "config", "html_static_path"),
}


def load(path: Path) -> dict:
    return yaml.safe_load(path.read_text(encoding="utf-8"))


def leaves(tree: object, path: tuple = ()) -> dict[tuple, object]:
    """Every value of a config by its key path; the language and path keys whole."""
    if isinstance(tree, dict) and path not in LANGUAGE_KEYS | PATH_KEYS:
        found = {}
        for key, value in tree.items():
            found.update(leaves(value, (*path, key)))
        return found
    return {path: tree}


def toc_files(toc: dict) -> list[tuple[int, str]]:
    """Each file of a jb-book toc with its depth, in reading order."""
    found = [(0, toc["root"])]

    def walk(entries, depth):
        for entry in entries or []:
            found.append((depth, entry["file"]))
            walk(entry.get("sections"), depth + 1)

    walk(toc.get("chapters"), 1)
    return found


def resolved(value: object, folder: Path) -> object:
    if isinstance(value, dict):
        return {key: resolved(item, folder) for key, item in value.items()}
    if isinstance(value, list):
        return [resolved(item, folder) for item in value]
    return (folder / value).resolve()


def test_the_english_toc_lists_the_russian_pages_in_their_order():
    russian, english = load(REPO / "_toc.yml"), load(EN / "_toc.yml")
    assert english["format"] == russian["format"]
    expected = [(depth, name.removeprefix("book/")) for depth, name in toc_files(russian)]
    assert toc_files(english) == expected
    assert all(name.startswith("book/") and "/" not in name[5:] for _, name in toc_files(russian))


def test_the_english_config_differs_only_in_its_language_and_paths():
    russian, english = leaves(load(REPO / "_config.yml")), leaves(load(EN / "_config.yml"))
    assert sorted(russian) == sorted(english), set(russian) ^ set(english)
    differ = {key for key in russian if russian[key] != english[key]}
    assert differ <= LANGUAGE_KEYS | PATH_KEYS, f"keys that are not language differ: {sorted(differ - LANGUAGE_KEYS)}"
    assert ("sphinx", "config", "language") in differ and ("title",) in differ
    for key in PATH_KEYS:
        assert resolved(russian[key], REPO) == resolved(english[key], EN), key
        for path in resolved(english[key], EN).values() if isinstance(english[key], dict) else resolved(
                english[key], EN):
            assert path.exists(), f"{key}: {path}"


def test_each_edition_links_the_other():
    russian, english = load(REPO / "_config.yml"), load(EN / "_config.yml")
    to_english = russian["sphinx"]["config"]["book_other_edition"]
    to_russian = english["sphinx"]["config"]["book_other_edition"]
    assert to_english["language"] == english["sphinx"]["config"]["language"] == "en"
    assert to_russian["language"] == russian["sphinx"]["config"]["language"] == "ru"
    # The other edition's root seen from this one's, and the folder of its pages there.
    assert (to_english["root"], to_english["folder"]) == ("en/", "")
    assert (to_russian["root"], to_russian["folder"]) == ("../", "book/")
    assert Path(load(REPO / "_toc.yml")["root"]).parent.as_posix() + "/" == to_russian["folder"]
    russian_pdf = russian["sphinx"]["config"]["book_pdf_filename"]
    assert english["sphinx"]["config"]["book_pdf_filename"] != russian_pdf
