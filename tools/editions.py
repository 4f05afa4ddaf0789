"""One source per page, two editions: ``book/sources/<page>.yml`` writes ``book/<page>.ipynb`` (Russian,
the first edition) and ``book/en/<page>.ipynb`` (English); a markdown page (``format: md``, its cells
its ``## `` sections) writes ``book/<page>.md`` and ``book/en/<page>.md``.

A source lists the page's cells in order. Each cell has an ``id``, a ``type`` (markdown or code), the
cell ``metadata`` both editions share (tags, a figure's name), its text in each edition (``ru``, ``en``)
and a ``synced`` stamp: the hashes of the two texts when they were last checked against each other. The
metadata's own prose (a figure's caption and alt text, a folded cell's button labels: ``WORDS``) sits in
the cell's ``words``, one mapping an edition (``words: {ru: {mystnb: {figure: {caption: …}}}, en: …}``),
merged into the metadata of that edition's notebook; the stamp then covers it with the text. The two editions
run the same program: a code cell's ``ru`` and ``en`` are equal once comments and the words inside
string literals are set aside (``program``); a literal with no letter outside ASCII and no space, such
as ``"pre"`` or ``"retina"``, is program and must be equal too.

    python tools/editions.py import PAGE      # a page's Russian notebook becomes its source (en: to write)
    python tools/editions.py write [PAGE...]  # both editions' notebooks from the sources
    python tools/editions.py stamp PAGE [CELL...]   # after both texts of these cells were checked
    python tools/editions.py check            # every way the editions have drifted apart; exit 1 if any

``write`` keeps a code cell's stored outputs while its text in that edition is unchanged and clears
them otherwise: the edition's notebook is then executed (README: the nbconvert command) so that its
outputs come from a top-to-bottom run. ``check`` is what ``tests/test_editions_sync.py`` runs: a
cell missing in one edition, an edition's text changed since the stamp (the other edition not
brought along), a code cell whose program differs, markdown whose labels, headings, directives
(dropdowns, figures, exercises) or cross-references differ, and a notebook edited by hand rather than
written from its source.
"""

from __future__ import annotations

import ast
import copy
import hashlib
import io
import json
import re
import sys
import tokenize
from pathlib import Path

import nbformat
import yaml

REPO = Path(__file__).resolve().parent.parent
BOOK = REPO / "book"
SOURCES = BOOK / "sources"
EDITIONS = ("ru", "en")
FOLDERS = {"ru": BOOK, "en": BOOK / "en"}


# -- the source file --------------------------------------------------------------------------

class SourceError(ValueError):
    """A source that cannot be read or written: its file and what is wrong."""


def source_path(page: str, sources: Path = SOURCES) -> Path:
    return sources / f"{page}.yml"


def notebook_path(page: str, edition: str, book: Path = BOOK, suffix: str = ".ipynb") -> Path:
    """Where an edition's file of a page lives: a notebook, or with ``suffix=".md"`` a markdown page."""
    return (book if edition == "ru" else book / edition) / f"{page}{suffix}"


def page_path(page: str, source: dict, edition: str, book: Path = BOOK) -> Path:
    return notebook_path(page, edition, book, ".md" if source.get("format") == "md" else ".ipynb")


MD_SECTION = re.compile(r"^(?=## )", re.M)      # a markdown page's cells: its ``## `` sections


def md_text(source: dict, edition: str) -> str:
    """A markdown page as ``write`` makes it: its cells joined by one blank line."""
    return "\n\n".join(cell[edition] or "" for cell in source["cells"]) + "\n"


def pages(sources: Path = SOURCES) -> list[str]:
    """The pages that have a source, sorted."""
    return sorted(path.stem for path in sources.glob("*.yml"))


def load(page: str, sources: Path = SOURCES) -> dict:
    path = source_path(page, sources)
    try:
        source = yaml.load(path.read_text(encoding="utf-8"), Loader=getattr(yaml, "CSafeLoader", yaml.SafeLoader))
    except (OSError, yaml.YAMLError) as error:
        raise SourceError(f"{path}: {error}") from error
    if not isinstance(source, dict) or not isinstance(source.get("cells"), list):
        raise SourceError(f"{path}: a source is a mapping with a list of cells")
    for number, cell in enumerate(source["cells"]):
        missing = {"id", "type", *EDITIONS} - set(cell)
        if missing:
            raise SourceError(f"{path}: cell {number} has no {', '.join(sorted(missing))}")
    return source


class _Literal(str):
    """A text dumped as a YAML block (``|``), as it reads in the file."""


def _block(dumper: yaml.Dumper, text: _Literal) -> yaml.Node:
    return dumper.represent_scalar("tag:yaml.org,2002:str", text, style="|" if "\n" in text or text else None)


class _Dumper(yaml.SafeDumper):
    pass


_Dumper.add_representer(_Literal, _block)


def dump(page: str, source: dict, sources: Path = SOURCES) -> None:
    blocks = copy.deepcopy(source)
    for cell in blocks["cells"]:
        for edition in EDITIONS:
            if isinstance(cell[edition], str):
                cell[edition] = _Literal(cell[edition])
    sources.mkdir(parents=True, exist_ok=True)
    text = yaml.dump(blocks, Dumper=_Dumper, allow_unicode=True, sort_keys=False, width=120)
    source_path(page, sources).write_text(text, encoding="utf-8")


def digest(text: str | None) -> str:
    return hashlib.sha256((text or "").encode("utf-8")).hexdigest()[:12]


# The metadata's prose: what a reader sees of a cell's metadata, one text an edition (``words``).
WORDS = (("mystnb", "figure", "caption"), ("mystnb", "image", "alt"),
         ("mystnb", "code_prompt_show"), ("mystnb", "code_prompt_hide"))


def edition_text(cell: dict, edition: str) -> str | None:
    """What the stamp covers of an edition: its text, and the metadata's words when the cell has them."""
    if not cell.get("words"):
        return cell[edition]
    words = cell["words"].get(edition)
    if not cell[edition] or not words:
        return None
    return cell[edition] + "\0" + json.dumps(words, ensure_ascii=False, sort_keys=True)


def stamp_of(cell: dict) -> str:
    return " ".join(digest(edition_text(cell, edition)) for edition in EDITIONS)


def word_paths(words: dict | None, prefix: tuple = ()) -> list[tuple]:
    """The paths of the texts in one edition's ``words``: ``[("mystnb", "figure", "caption"), …]``."""
    found = []
    for key, value in (words or {}).items():
        found += word_paths(value, (*prefix, key)) if isinstance(value, dict) else [(*prefix, key)]
    return sorted(found)


def edition_metadata(cell: dict, edition: str) -> dict:
    """A cell's metadata in an edition's notebook: the shared metadata with that edition's words merged in."""
    metadata = copy.deepcopy(cell.get("metadata") or {})
    words = (cell.get("words") or {}).get(edition) or {}
    for path in word_paths(words):
        value, place = words, metadata
        for key in path[:-1]:
            value, place = value[key], place.setdefault(key, {})
        place[path[-1]] = value[path[-1]]
    return metadata


def split_words(metadata: dict) -> dict:
    """Take the ``WORDS`` out of a notebook cell's metadata (in place) and return them as one edition's words."""
    words = {}
    for path in WORDS:
        place = metadata
        for key in path[:-1]:
            place = place.get(key) if isinstance(place, dict) else None
        if isinstance(place, dict) and path[-1] in place:
            target = words
            for key in path[:-1]:
                target = target.setdefault(key, {})
            target[path[-1]] = place.pop(path[-1])
    _prune(metadata)
    return words


def _prune(mapping: dict) -> None:
    """Drop the mappings a split left empty (``image: {}`` without its alt text)."""
    for key in list(mapping):
        if isinstance(mapping[key], dict):
            _prune(mapping[key])
            if not mapping[key]:
                del mapping[key]


# -- commands ----------------------------------------------------------------------------------

def import_page(page: str, book: Path = BOOK, sources: Path = SOURCES) -> dict:
    """The Russian notebook's cells (a markdown page's ``## `` sections) as a new source; the English
    texts are left empty to be written."""
    markdown = notebook_path(page, "ru", book, ".md")
    if markdown.exists():
        parts = [part.strip("\n") for part in MD_SECTION.split(markdown.read_text(encoding="utf-8"))]
        cells = [{"id": f"{page}-{number}", "type": "markdown", "metadata": {}, "ru": part, "en": None,
                  "synced": None} for number, part in enumerate(parts) if part]
        source = {"page": page, "format": "md", "cells": cells}
        dump(page, source, sources)
        return source
    notebook = nbformat.read(notebook_path(page, "ru", book), as_version=4)
    cells = []
    for cell in notebook.cells:
        metadata = _plain(cell.metadata)
        words = split_words(metadata)
        cells.append({"id": cell.id, "type": cell.cell_type, "metadata": metadata,
                      **({"words": {"ru": words, "en": None}} if words else {}),
                      "ru": cell.source, "en": None, "synced": None})
    source = {"page": page, "metadata": _plain(notebook.metadata), "cells": cells}
    dump(page, source, sources)
    return source


def _plain(node: object) -> object:
    """A notebook's metadata as plain dicts and lists (``NotebookNode`` is a dict YAML does not know)."""
    return json.loads(json.dumps(node))


def built(source: dict, edition: str, old: nbformat.NotebookNode | None) -> nbformat.NotebookNode:
    """The edition's notebook written from the source; code cells keep ``old``'s outputs while their
    text is the same."""
    before = {cell.id: cell for cell in old.cells} if old is not None else {}
    notebook = nbformat.v4.new_notebook(metadata=copy.deepcopy(source.get("metadata", {})))
    for cell in source["cells"]:
        text = cell[edition] or ""
        metadata = edition_metadata(cell, edition)
        if cell["type"] == "code":
            made = nbformat.v4.new_code_cell(text, id=cell["id"], metadata=metadata)
            kept = before.get(cell["id"])
            if kept is not None and kept.cell_type == "code" and kept.source == text:
                made.outputs, made.execution_count = kept.outputs, kept.execution_count
        else:
            made = nbformat.v4.new_markdown_cell(text, id=cell["id"], metadata=metadata)
        notebook.cells.append(made)
    return notebook


def write(page: str, book: Path = BOOK, sources: Path = SOURCES) -> list[Path]:
    source = load(page, sources)
    written = []
    for edition in EDITIONS:
        path = page_path(page, source, edition, book)
        if source.get("format") == "md":
            path.parent.mkdir(parents=True, exist_ok=True)
            path.write_text(md_text(source, edition), encoding="utf-8")
            written.append(path)
            continue
        old = nbformat.read(path, as_version=4) if path.exists() else None
        notebook = built(source, edition, old)
        path.parent.mkdir(parents=True, exist_ok=True)
        nbformat.write(notebook, path)
        written.append(path)
    return written


def stamp(page: str, cells: list[str] | None = None, sources: Path = SOURCES) -> list[str]:
    """Record that these cells' two texts (all cells: ``None``) say the same thing now."""
    source = load(page, sources)
    known = {cell["id"] for cell in source["cells"]}
    unknown = sorted(set(cells or ()) - known)
    if unknown:
        raise SourceError(f"{source_path(page, sources)}: no cell {', '.join(unknown)}")
    done = []
    for cell in source["cells"]:
        if cells is None or cell["id"] in cells:
            if not all(edition_text(cell, edition) for edition in EDITIONS):
                raise SourceError(f"{page}: cell {cell['id']} has no text in "
                                  f"{', '.join(e for e in EDITIONS if not edition_text(cell, e))}; "
                                  "write it before the stamp")
            cell["synced"] = stamp_of(cell)
            done.append(cell["id"])
    dump(page, source, sources)
    return done


# -- what must be equal in both editions ---------------------------------------------------------

MAGIC = re.compile(r"^\s*[%!]")
PROGRAM_STRING = re.compile(r"[\x21-\x7e]*")     # ASCII, no space: a name the program reads, e.g. "pre"


def _string_group(literals: list[str], edition: str) -> tuple:
    """Adjacent string literals as one token: the expressions of f-strings, and the text when it is
    program (ASCII with no space; the edition's own name, e.g. ``"en"``, counts as ``EDITION``)."""
    words, expressions = [], []
    for literal in literals:
        node = ast.parse(literal, mode="eval").body
        if isinstance(node, ast.JoinedStr):
            for part in node.values:
                if isinstance(part, ast.FormattedValue):
                    spec = ast.dump(part.format_spec) if part.format_spec else ""
                    expressions.append((ast.dump(part.value), part.conversion, spec))
                    words.append("\0")
                else:
                    words.append(part.value)
        else:
            words.append(node.value if isinstance(node.value, str) else repr(node.value))
    text = "".join(words)
    text = "EDITION" if text == edition else text
    return ("STRING", tuple(expressions), text if PROGRAM_STRING.fullmatch(text) else None)


def program(code: str, edition: str = "ru") -> list[tuple]:
    """A code cell's tokens with comments and line breaks inside brackets set aside; a string literal
    (adjacent ones together) is ``("STRING", its f-string expressions, its text or None)``, the text
    kept only where it is program (``same_program`` compares the rest). IPython's magic lines
    (``%config …``) count as one token each, without their comment."""
    lines, magics = [], []
    for line in code.splitlines():
        if MAGIC.match(line):
            magics.append(("MAGIC", _without_comment(line).strip()))
            lines.append(f"_magic_{len(magics) - 1}_")
        else:
            lines.append(line)
    tokens, strings = [], []

    def flush() -> None:
        if strings:
            tokens.append(_string_group(strings, edition))
            strings.clear()

    for token in tokenize.generate_tokens(io.StringIO("\n".join(lines) + "\n").readline):
        if token.type in (tokenize.COMMENT, tokenize.NL):
            continue
        if token.type == tokenize.STRING:
            strings.append(token.string)
            continue
        flush()
        if token.type == tokenize.NAME and token.string.startswith("_magic_"):
            tokens.append(magics[int(token.string.split("_")[2])])
        elif token.type not in (tokenize.ENDMARKER,):
            tokens.append((tokenize.tok_name[token.type], token.string if token.type != tokenize.INDENT else ""))
    flush()
    return tokens


def same_token(ours: tuple, theirs: tuple) -> bool:
    """Equal tokens; two string tokens are the same program when their f-string expressions are equal
    and, where both texts are program, the texts too (a word in one edition is that edition's word)."""
    if ours[0] == theirs[0] == "STRING":
        both_program = ours[2] is not None and theirs[2] is not None
        return ours[1] == theirs[1] and (ours[2] == theirs[2] or not both_program)
    return ours == theirs


def program_difference(ru: str, en: str) -> str | None:
    """Where the two editions' code runs differently, or ``None`` when it is the same program."""
    ours, theirs = program(ru, "ru"), program(en, "en")
    for index, (a, b) in enumerate(zip(ours, theirs, strict=False)):  # the shorter first
        if not same_token(a, b):
            return f"token {index}: ru {a!r}, en {b!r}"
    if len(ours) != len(theirs):
        return f"ru has {len(ours)} tokens, en {len(theirs)}"
    return None


def _without_comment(line: str) -> str:
    """A magic line up to its comment (a ``#`` outside quotes)."""
    quote = None
    for index, char in enumerate(line):
        if quote:
            quote = None if char == quote else quote
        elif char in "\"'":
            quote = char
        elif char == "#":
            return line[:index]
    return line


TARGET = re.compile(r"^\(([^)\s]+)\)=\s*$", re.M)
HEADING = re.compile(r"^(#{1,6})\s", re.M)
DIRECTIVE = re.compile(r"^[ \t]*(:{3,}|`{3,})\{([\w:-]+)\}|^[ \t]*:(class|name|label|class-container|"
                       r"nonumber|hidden):[ \t]*([^\n]*)$", re.M)
ROLE = re.compile(r"\{(ref|numref|doc|cite:p|cite:t|cite|eq|download|term)\}`([^`]*)`")
IMAGE = re.compile(r"!\[[^\]]*\]\(([^)\s]+)")
DISPLAY_MATH = re.compile(r"\$\$")


def _role_target(role: str, text: str, edition: str = "ru") -> tuple[str, str]:
    explicit = re.search(r"<([^>]+)>\s*$", text)
    target = (explicit.group(1) if explicit else text).strip()
    if role == "download" and edition != "ru":
        # An edition downloads its own file (the course zip): from its folder, one level below
        # book/, the first edition's file name with -<edition> before the extension. Written
        # back as the first edition's target, it must be that target.
        own = re.fullmatch(rf"\.\./(.+)-{edition}(\.[^./]+)", target)
        target = own.group(1) + own.group(2) if own else target
    return role, target


def markdown_structure(text: str, edition: str = "ru") -> dict[str, object]:
    """What both editions' markdown must share: labels, heading levels, directives with their
    options that are names (dropdown, figure and exercise labels), cross-reference targets, images and
    display formulas. A ``{download}`` of the English edition names the English file
    (``../../_build/course/llm-from-scratch-course-en.zip`` where the Russian page has
    ``../_build/course/llm-from-scratch-course.zip``)."""
    directives = []
    for match in DIRECTIVE.finditer(text):
        if match.group(2):
            directives.append(("directive", match.group(2)))
        elif match.group(3) in ("class", "name", "label", "class-container", "nonumber", "hidden"):
            directives.append((match.group(3), match.group(4).strip()))
    return {
        "labels": TARGET.findall(text),
        "headings": [len(hashes) for hashes in HEADING.findall(text)],
        "directives": directives,
        "references": sorted(_role_target(role, target, edition) for role, target in ROLE.findall(text)),
        "images": IMAGE.findall(text),
        "display formulas": len(DISPLAY_MATH.findall(text)) // 2,
    }


# -- the check ---------------------------------------------------------------------------------

def check_source(page: str, source: dict) -> list[str]:
    """How the two texts of a page's cells have drifted apart, one line a problem, naming the cell."""
    found, seen = [], set()
    for number, cell in enumerate(source["cells"]):
        where = f"{page}: cell {number} ({cell['id']})"
        if cell["id"] in seen:
            found.append(f"{where}: the id is used twice")
        seen.add(cell["id"])
        empty = [edition for edition in EDITIONS if not edition_text(cell, edition)]
        if empty:
            found.append(f"{where}: no {' and no '.join(empty)} text")
            continue
        if cell.get("words"):
            paths = {edition: word_paths(cell["words"].get(edition)) for edition in EDITIONS}
            if paths["ru"] != paths["en"]:
                found.append(f"{where}: the metadata's words differ: ru {paths['ru']}, en {paths['en']}")
        if cell.get("synced") != stamp_of(cell):
            old = (cell.get("synced") or "").split()
            changed = [edition for index, edition in enumerate(EDITIONS)
                       if index >= len(old) or old[index] != digest(edition_text(cell, edition))]
            if len(old) != len(EDITIONS):
                found.append(f"{where}: never stamped: check that both texts say the same, then "
                             f"`python tools/editions.py stamp {page} {cell['id']}`")
            elif len(changed) == 1:
                other = next(edition for edition in EDITIONS if edition not in changed)
                found.append(f"{where}: the {changed[0]} text changed and the {other} text did not; "
                             f"bring the {other} edition along, then stamp the cell")
            else:
                found.append(f"{where}: both texts changed since the stamp; check they say the same, "
                             "then stamp the cell")
        if cell["type"] == "code":
            try:
                difference = program_difference(cell["ru"], cell["en"])
            except (tokenize.TokenError, SyntaxError, IndentationError) as error:
                found.append(f"{where}: the code does not parse: {error}")
                continue
            if difference:
                found.append(f"{where}: the editions run different programs: {difference}")
        else:
            shapes = {edition: markdown_structure(cell[edition], edition) for edition in EDITIONS}
            for key in shapes["ru"]:
                if shapes["ru"][key] != shapes["en"][key]:
                    found.append(f"{where}: {key} differ: ru {shapes['ru'][key]}, en {shapes['en'][key]}")
    return found


def check_notebooks(page: str, source: dict, book: Path = BOOK) -> list[str]:
    """Each edition's notebook is the one ``write`` makes from the source: the same cells, ids,
    types, metadata and texts, in the same order."""
    found = []
    for edition in EDITIONS:
        path = page_path(page, source, edition, book)
        if not path.exists():
            found.append(f"{page}: no {edition} page {path.relative_to(book.parent)}; run "
                         f"`python tools/editions.py write {page}`")
            continue
        if source.get("format") == "md":
            if path.read_text(encoding="utf-8") != md_text(source, edition):
                found.append(f"{page}: the {edition} page {path.name} differs from the source: edit the "
                             "source, then write the page")
            continue
        notebook = nbformat.read(path, as_version=4)
        ours = [(c["id"], c["type"], edition_metadata(c, edition), c[edition] or "") for c in source["cells"]]
        theirs = [(c.id, c.cell_type, dict(c.metadata), c.source) for c in notebook.cells]
        if [o[0] for o in ours] != [t[0] for t in theirs]:
            lost = [o[0] for o in ours if o[0] not in {t[0] for t in theirs}]
            gained = [t[0] for t in theirs if t[0] not in {o[0] for o in ours}]
            detail = (f"; not in the notebook: {', '.join(lost)}" if lost else "") + \
                     (f"; not in the source: {', '.join(gained)}" if gained else "")
            found.append(f"{page}: the {edition} notebook's cells are not the source's{detail or ' (order)'}")
            continue
        for number, (mine, its) in enumerate(zip(ours, theirs, strict=True)):
            if mine != its:
                what = [name for name, a, b in zip(("id", "type", "metadata", "text"), mine, its, strict=True)
                        if a != b]
                found.append(f"{page}: cell {number} ({mine[0]}) of the {edition} notebook differs from the "
                             f"source in its {', '.join(what)}: edit the source, then write the page")
    return found


def check(book: Path = BOOK, sources: Path = SOURCES) -> list[str]:
    found = []
    for page in pages(sources):
        source = load(page, sources)
        found += check_source(page, source)
        found += check_notebooks(page, source, book)
    english = {path.stem for suffix in ("*.ipynb", "*.md") for path in (book / "en").glob(suffix)}
    found += [f"{page}: an English page without a source" for page in sorted(english - set(pages(sources)))]
    return found


def main(arguments: list[str]) -> int:
    usage = __doc__.split("\n\n")[2]
    if not arguments or arguments[0] not in ("import", "write", "stamp", "check"):
        print(usage, file=sys.stderr)
        return 2
    command, rest = arguments[0], arguments[1:]
    try:
        if command == "import":
            for page in rest:
                import_page(page)
                print(f"{source_path(page).relative_to(REPO)}: written; the English texts are to write")
        elif command == "write":
            for page in rest or pages():
                for path in write(page):
                    print(f"{path.relative_to(REPO)}: written")
        elif command == "stamp":
            if not rest:
                print(usage, file=sys.stderr)
                return 2
            done = stamp(rest[0], rest[1:] or None)
            print(f"{rest[0]}: stamped {len(done)} cells")
        else:
            found = check()
            print("\n".join(found) if found else f"editions in step: {len(pages())} pages")
            return 1 if found else 0
    except SourceError as error:
        print(f"editions: {error}", file=sys.stderr)
        return 1
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
