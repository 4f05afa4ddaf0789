"""The core's modules form layers: each imports only the modules below it.

So there is no import cycle, and a reader can take the modules in this
order, each one using only what came before.
"""

import ast
from pathlib import Path

import pytest

CORE = Path(__file__).parents[1] / "src" / "llm_from_scratch"
LAYERS = ["errors", "tensor", "parameter", "checks", "rng", "rope",
          "heads", "causal", "fused", "attention", "rmsnorm", "swiglu",
          "block", "gradcheck"]


def package_imports(module: str) -> set[str]:
    """The modules of the package that ``module`` imports (``from .x ...``)."""
    tree = ast.parse((CORE / f"{module}.py").read_text(encoding="utf-8"))
    imported = set()
    for node in ast.walk(tree):
        if isinstance(node, ast.ImportFrom) and node.level == 1:
            if node.module:  # from .tensor import Tensor
                imported.add(node.module.split(".")[0])
            else:  # from . import rmsnorm
                imported.update(alias.name for alias in node.names)
        elif isinstance(node, ast.ImportFrom | ast.Import):
            names = [node.module] if isinstance(node, ast.ImportFrom) else [a.name for a in node.names]
            assert not any(name and name.startswith("llm_from_scratch") for name in names), module
    return imported


def test_every_core_module_has_a_layer():
    assert sorted(path.stem for path in CORE.glob("*.py") if path.stem != "__init__") == sorted(LAYERS)


@pytest.mark.parametrize("module", LAYERS)
def test_a_module_imports_only_the_layers_below_it(module):
    below = set(LAYERS[:LAYERS.index(module)])
    assert package_imports(module) <= below, f"{module} imports {package_imports(module) - below}"


def test_the_check_sees_an_import():
    assert package_imports("block") >= {"attention", "rmsnorm", "swiglu", "checks"}



def chapter_imports(source: str, package: str) -> set[str]:
    """The package's top-level folders and modules that a module of ``package`` (e.g. ``ch30``) imports."""
    found = set()
    for node in ast.walk(ast.parse(source)):
        if isinstance(node, ast.ImportFrom) and node.level == 1:      # from .figures / from . import x
            found.add(package)
        elif isinstance(node, ast.ImportFrom) and node.level == 2:    # from ..ch31 / from .. import tensor
            found.update([node.module.split(".")[0]] if node.module else [a.name for a in node.names])
    return found


@pytest.mark.parametrize("chapter", ["ch30", "ch31"])
def test_a_chapter_folder_imports_no_other_chapter(chapter):
    """A chapter's code uses the core, ``book/`` and ``text/``, never another chapter's folder."""
    others = {path.name for path in CORE.glob("ch[0-9]*") if path.is_dir()} - {chapter}
    assert others, "expected more than one chapter folder"
    for path in sorted((CORE / chapter).glob("*.py")):
        crossed = chapter_imports(path.read_text(encoding="utf-8"), chapter) & others
        assert not crossed, f"{chapter}/{path.name} imports {crossed}"


def test_the_import_reader_sees_a_cross_import():
    source = "from ..ch31 import depth_lab\nfrom . import figures\nfrom .. import tensor\n"
    assert chapter_imports(source, "ch30") == {"ch31", "ch30", "tensor"}
