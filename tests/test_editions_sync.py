"""The two editions cannot drift apart: every page written in ``book/sources/`` is one source for the
Russian notebook (``book/<page>.ipynb``) and the English one (``book/en/<page>.ipynb``), and
``tools/editions.py check`` names every cell where they differ in what they must share."""

import copy
import re
import shutil
import subprocess
import sys
from pathlib import Path

import nbformat
import pytest
import yaml

REPO = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(REPO / "tools"))

import editions  # noqa: E402

PAGES = editions.pages()
SOURCES = {page: editions.load(page) for page in PAGES}
NOTEBOOK_PAGES = [page for page in PAGES if SOURCES[page].get("format") != "md"]


@pytest.fixture
def book(tmp_path: Path) -> Path:
    """A copy of the book's sources and both editions' notebooks of every page with a source."""
    copy = tmp_path / "book"
    shutil.copytree(editions.SOURCES, copy / "sources")
    for page in PAGES:
        for edition in editions.EDITIONS:
            target = editions.page_path(page, SOURCES[page], edition, copy)
            target.parent.mkdir(parents=True, exist_ok=True)
            shutil.copy(editions.page_path(page, SOURCES[page], edition), target)
    return copy


def found(book: Path) -> list[str]:
    return editions.check(book, book / "sources")


def edit_source(book: Path, page: str, change) -> None:
    source = editions.load(page, book / "sources")
    change(source)
    editions.dump(page, source, book / "sources")


def cell(source: dict, cell_id: str) -> dict:
    return next(c for c in source["cells"] if c["id"] == cell_id)


def where(page: str, cell_id: str) -> str:
    """How ``check`` names a cell: its page, its position in the source and its id."""
    number = [c["id"] for c in SOURCES[page]["cells"]].index(cell_id)
    return f"{page}: cell {number} ({cell_id})"


# --- on main -------------------------------------------------------------------------------------

def test_some_pages_have_a_source_and_both_editions():
    assert {"ch30-checks", "ch31-checks", "intro", "glossary"} <= set(PAGES)
    assert {"intro", "glossary"}.isdisjoint(NOTEBOOK_PAGES)
    for page in PAGES:
        for edition in editions.EDITIONS:
            assert editions.page_path(page, SOURCES[page], edition).exists(), (page, edition)


def test_the_editions_are_in_step():
    assert editions.check() == []


def test_the_command_line_says_so():
    result = subprocess.run([sys.executable, str(REPO / "tools" / "editions.py"), "check"],
                            capture_output=True, text=True, timeout=120)
    assert (result.returncode, result.stdout) == (0, f"editions in step: {len(PAGES)} pages\n")


def test_each_edition_sets_its_own_edition_before_the_package_is_imported():
    for page in NOTEBOOK_PAGES:
        for edition in editions.EDITIONS:
            notebook = nbformat.read(editions.notebook_path(page, edition), as_version=4)
            code = [c.source for c in notebook.cells if c.cell_type == "code"]
            setting = f'os.environ["LLM_FROM_SCRATCH_EDITION"] = "{edition}"'
            first = next(i for i, text in enumerate(code) if "llm_from_scratch import" in text
                         or "from llm_from_scratch" in text)
            assert any(setting in text for text in code[:first + 1]), (page, edition)


# --- drift is named ------------------------------------------------------------------------------

def test_a_cell_one_edition_gains_is_named(book):
    path = editions.notebook_path("ch31-checks", "en", book)
    notebook = nbformat.read(path, as_version=4)
    notebook.cells.insert(3, nbformat.v4.new_markdown_cell("An extra paragraph.", id="extra-cell"))
    nbformat.write(notebook, path)
    assert found(book) == ["ch31-checks: the en notebook's cells are not the source's; "
                           "not in the source: extra-cell"]


def test_a_cell_one_edition_loses_is_named(book):
    path = editions.notebook_path("ch31-checks", "ru", book)
    notebook = nbformat.read(path, as_version=4)
    del notebook.cells[5]
    nbformat.write(notebook, path)
    assert found(book) == ["ch31-checks: the ru notebook's cells are not the source's; "
                           "not in the notebook: c31e34e9"]


def test_a_notebook_edited_by_hand_is_named(book):
    path = editions.notebook_path("ch31-checks", "en", book)
    notebook = nbformat.read(path, as_version=4)
    notebook.cells[3].source += " One more sentence."
    nbformat.write(notebook, path)
    assert found(book) == ["ch31-checks: cell 3 (b3de249e) of the en notebook differs from the source in "
                           "its text: edit the source, then write the page"]


def test_prose_changed_in_one_edition_only_is_named(book):
    def russian_only(source):
        cell(source, "3bd87e5e")["ru"] += " Ещё одно предложение."
    edit_source(book, "ch31-checks", russian_only)
    editions.write("ch31-checks", book, book / "sources")
    assert found(book) == [where("ch31-checks", "3bd87e5e") + ": the ru text changed and the en text did not; "
                           "bring the en edition along, then stamp the cell"]


def test_a_printed_word_changed_in_one_edition_is_named_by_the_stamp_not_as_another_program(book):
    def english_only(source):
        code = cell(source, "b07a65e6")
        code["en"] = code["en"].replace('"one seed, the same weights:"', '"same seed, same weights:"')
        code["en"] = code["en"].replace("print(", "print(  # a comment\n    ", 1)
    edit_source(book, "ch31-checks", english_only)
    editions.write("ch31-checks", book, book / "sources")
    assert found(book) == [where("ch31-checks", "b07a65e6") + ": the en text changed and the ru text did not; "
                           "bring the ru edition along, then stamp the cell"]


@pytest.mark.parametrize(("before", "after", "token"), [
    ("delta=1e-6", "delta=1e-5", "('NUMBER', '1e-5')"),
    ('RmsNorm.new("g", 5)', 'RmsNorm.new("h", 5)', "('STRING', (), 'h')"),
    ("{report.total - n_input}", "{report.total + n_input}", "op=Add()"),
    ('= "en"', '= "ru"', "('STRING', (), 'ru')"),
])
def test_a_code_cell_whose_program_changes_in_one_edition_is_named(book, before, after, token):
    def english_program(source):
        for code in source["cells"]:
            if code["type"] == "code" and before in code["en"]:
                code["en"] = code["en"].replace(before, after)
                code["synced"] = editions.stamp_of(code)        # even a fresh stamp does not hide it
                return
        raise AssertionError(before)
    edit_source(book, "ch31-checks", english_program)
    editions.write("ch31-checks", book, book / "sources")
    problems = found(book)
    assert len(problems) == 1 and "the editions run different programs" in problems[0], problems
    assert token in problems[0].split(", en ")[1], problems


def test_markdown_whose_labels_or_references_differ_is_named(book):
    def english_structure(source):
        title = cell(source, "ch31-checks-title")
        title["en"] = title["en"].replace("{doc}`main page <ch31-decoder-block>`", "main page")
        title["synced"] = editions.stamp_of(title)
    edit_source(book, "ch31-checks", english_structure)
    editions.write("ch31-checks", book, book / "sources")
    assert found(book) == ["ch31-checks: cell 0 (ch31-checks-title): references differ: "
                           "ru [('doc', 'ch31-decoder-block')], en []"]


def test_a_caption_changed_in_one_edition_only_is_named_by_the_stamp(book):
    def english_caption(source):
        figure = cell(source, "ch31-a4f59865")["words"]["en"]["mystnb"]["figure"]
        figure["caption"] += " One more sentence."
    edit_source(book, "ch31-depth-lab", english_caption)
    editions.write("ch31-depth-lab", book, book / "sources")
    assert found(book) == [where("ch31-depth-lab", "ch31-a4f59865") + ": the en text changed and the ru text did "
                           "not; bring the ru edition along, then stamp the cell"]


def test_metadata_words_one_edition_lacks_are_named(book):
    def no_english_alt(source):
        figure = cell(source, "ch31-a4f59865")
        del figure["words"]["en"]["mystnb"]["image"]
        figure["synced"] = editions.stamp_of(figure)
    edit_source(book, "ch31-depth-lab", no_english_alt)
    editions.write("ch31-depth-lab", book, book / "sources")
    assert found(book) == [where("ch31-depth-lab", "ch31-a4f59865") + ": the metadata's words differ: "
                           "ru [('mystnb', 'figure', 'caption'), ('mystnb', 'image', 'alt')], "
                           "en [('mystnb', 'figure', 'caption')]"]


def test_each_edition_gets_its_own_captions_and_the_shared_metadata():
    source = SOURCES["ch31-depth-lab"]
    ru, en = (nbformat.read(editions.notebook_path("ch31-depth-lab", edition), as_version=4)
              for edition in editions.EDITIONS)
    figures = [c["id"] for c in source["cells"] if "figure" in (c.get("metadata") or {}).get("mystnb", {})]
    assert len(figures) == 4
    for ours, theirs in zip(ru.cells, en.cells, strict=True):
        if ours.id in figures:
            assert ours.metadata.mystnb.figure.name == theirs.metadata.mystnb.figure.name
            assert re.search("[а-я]", ours.metadata.mystnb.figure.caption + ours.metadata.mystnb.image.alt)
            assert not re.search("[а-яё]", (theirs.metadata.mystnb.figure.caption + theirs.metadata.mystnb.image.alt
                                             ).lower())
        if "hide-cell" in ours.metadata.get("tags", []):
            assert (ours.metadata.mystnb.code_prompt_hide, theirs.metadata.mystnb.code_prompt_hide) == ("Скрыть",
                                                                                                        "Hide")


def test_import_moves_the_metadata_words_into_the_russian_edition():
    metadata = {"tags": ["hide-cell"], "mystnb": {"code_prompt_show": "Показать", "figure": {
        "caption": "Подпись.", "name": "fig-ch31-x"}, "image": {"alt": "Что на рисунке."}}}
    shared = copy.deepcopy(metadata)
    words = editions.split_words(shared)
    assert shared == {"tags": ["hide-cell"], "mystnb": {"figure": {"name": "fig-ch31-x"}}}
    assert words == {"mystnb": {"code_prompt_show": "Показать", "figure": {"caption": "Подпись."},
                                "image": {"alt": "Что на рисунке."}}}
    cell = {"metadata": shared, "words": {"ru": words, "en": None}}
    assert editions.edition_metadata(cell, "ru") == metadata
def test_each_edition_downloads_its_own_course_zip(book):
    """The English front page links the English zip from book/en/; linking the Russian one is named."""
    ru, en = (editions.markdown_structure(cell(SOURCES["intro"], "intro-5")[edition], edition)
              for edition in editions.EDITIONS)
    assert ("download", "../_build/course/llm-from-scratch-course.zip") in ru["references"]
    assert ru["references"] == en["references"]
    russian_zip = "<../../_build/course/llm-from-scratch-course.zip>"

    def english_links_the_russian_zip(source):
        download = cell(source, "intro-5")
        download["en"] = download["en"].replace("<../../_build/course/llm-from-scratch-course-en.zip>",
                                                russian_zip)
        assert russian_zip in download["en"]
        download["synced"] = editions.stamp_of(download)
    edit_source(book, "intro", english_links_the_russian_zip)
    editions.write("intro", book, book / "sources")
    assert [problem for problem in found(book) if problem.startswith("intro:")] == [
        "intro: cell 5 (intro-5): references differ: "
        "ru [('download', '../_build/course/llm-from-scratch-course.zip')], "
        "en [('download', '../../_build/course/llm-from-scratch-course.zip')]"]


def test_an_english_notebook_without_a_source_is_named(book):
    shutil.copy(editions.notebook_path("ch31-checks", "en", book), book / "en" / "stray.ipynb")
    assert found(book) == ["stray: an English page without a source"]


def test_a_markdown_page_edited_by_hand_or_drifting_is_named(book):
    english = book / "en" / "glossary.md"
    english.write_text(english.read_text(encoding="utf-8") + "\nOne more line.\n", encoding="utf-8")
    assert found(book) == ["glossary: the en page glossary.md differs from the source: edit the source, "
                           "then write the page"]

    def russian_only(source):
        cell(source, "glossary-1")["ru"] += "\n| новый термин | — | — |"
    edit_source(book, "glossary", russian_only)
    editions.write("glossary", book, book / "sources")
    assert found(book) == ["glossary: cell 1 (glossary-1): the ru text changed and the en text did not; "
                           "bring the en edition along, then stamp the cell"]


def test_a_markdown_page_is_its_sections_joined():
    source = SOURCES["glossary"]
    assert [c["ru"].splitlines()[0] for c in source["cells"]] == [
        "# Словарь терминов", "## Глава 30: многоголовое внимание", "## Глава 31: блок декодера"]
    assert (editions.BOOK / "glossary.md").read_text(encoding="utf-8") == editions.md_text(source, "ru")


# --- what counts as the same program ------------------------------------------------------------

def same(ru: str, en: str) -> bool:
    return editions.program_difference(ru, en) is None


def test_comments_words_in_strings_and_line_breaks_are_set_aside():
    assert same('x = f(a,  # это a\n      b)\nprint("веса:", x)', 'x = f(a, b)  # a and b\nprint("weights:", x)')
    assert same('print("одна строка, "\n      "вторая")', 'print("one line")')
    assert same('%config X.y = ["retina"]  # вдвое', '%config X.y = ["retina"]  # twice')


def test_f_string_expressions_and_program_strings_are_compared():
    assert same('print(f"веса {w:.3f}")', 'print(f"weights {w:.3f}")')
    assert not same('print(f"веса {w:.3f}")', 'print(f"weights {w:.4f}")')
    assert not same('print(f"веса {w}")', 'print(f"weights {v}")')
    assert not same('run(variant="pre")', 'run(variant="post")')
    assert same('label = "слово"', 'label = "word"')
    assert not same('%config X.y = ["retina"]', '%config X.y = ["png"]')
    assert not same("x = 1", "x = 2")


def test_the_source_file_reads_as_text_side_by_side():
    text = editions.source_path("ch31-checks").read_text(encoding="utf-8")
    source = yaml.safe_load(text)
    first = source["cells"][0]
    assert (first["ru"].splitlines()[0], first["en"].splitlines()[0]) == ("# Проверки главы 31",
                                                                          "# Checks for chapter 31")
    assert "  ru: |-\n    # Проверки главы 31\n" in text


# --- the same numbers in both editions ---------------------------------------------------------

NUMBER = re.compile(r"-?\d+(?:\.\d+)?(?:e[-+]?\d+)?")


def printed_numbers(cell: nbformat.NotebookNode) -> list[str]:
    """Every number a code cell's stored text outputs show (streams, tables, errors), in order."""
    texts = []
    for output in cell.get("outputs", []):
        if output.output_type == "stream":
            texts.append(output.text)
        elif output.output_type == "error":
            texts.append(f"{output.ename}: {output.evalue}")
        else:
            data = output.get("data", {})
            texts.append(data.get("text/markdown") or data.get("text/plain") or "")
    return NUMBER.findall("\n".join(texts))


@pytest.mark.parametrize("page", NOTEBOOK_PAGES)
def test_every_number_printed_is_the_same_in_both_editions(page):
    ru, en = (nbformat.read(editions.notebook_path(page, edition), as_version=4) for edition in editions.EDITIONS)
    for ours, theirs in zip(ru.cells, en.cells, strict=True):
        if ours.cell_type == "code":
            assert printed_numbers(ours) == printed_numbers(theirs), ours.id
            assert bool(ours.outputs) == bool(theirs.outputs), ours.id


CYRILLIC = re.compile(r"[А-Яа-яЁё]")
TARGETS = re.compile(r"\{(?:numref|ref|doc|cite:p|cite)\}`([^`]*)`")


def _metadata_words(cell) -> list[str]:
    mystnb = cell.metadata.get("mystnb", {})
    return [text for text in (mystnb.get("figure", {}).get("caption"), mystnb.get("image", {}).get("alt"),
                              mystnb.get("code_prompt_show"), mystnb.get("code_prompt_hide")) if text]


@pytest.mark.parametrize("page", NOTEBOOK_PAGES)
def test_english_captions_alt_texts_and_buttons_are_english_and_point_where_the_russian_do(page):
    """A figure's caption and alt text and a folded cell's button come from the edition's words:
    no Cyrillic in the English notebook, and a caption's cross-references are the Russian one's."""
    russian, english = (nbformat.read(editions.notebook_path(page, edition), as_version=4)
                        for edition in editions.EDITIONS)
    for ru_cell, en_cell in zip(russian.cells, english.cells, strict=True):
        for text in _metadata_words(en_cell):
            assert not CYRILLIC.search(text), f"{page} {en_cell.id}: {text[:80]!r}"
        ru_targets = [TARGETS.findall(text) for text in _metadata_words(ru_cell)]
        en_targets = [TARGETS.findall(text) for text in _metadata_words(en_cell)]
        assert [sorted(t) for t in ru_targets] == [sorted(t) for t in en_targets], f"{page} {en_cell.id}"
