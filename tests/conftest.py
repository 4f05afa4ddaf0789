"""Fixtures: the two worked examples built through the public API."""

import pytest

from worked_examples import build_chapter30_attention, build_chapter31_block


@pytest.fixture
def attention30():
    return build_chapter30_attention()


@pytest.fixture
def block31():
    return build_chapter31_block()


# The longest modules start first (the Makefile runs pytest-xdist with
# --dist loadscope --no-loadscope-reorder, so modules go to the workers in
# this order): JupyterLab and the habit kernels need no built book, so they run
# while `make test` builds it beside them; the downloaded course (a fresh venv,
# then nbval in it) comes as soon as the book is there; the short modules fill in.
SLOW_FIRST = ("test_jupyterlab.py", "test_notebook_habits.py",
              "test_course_download.py", "ch31-training.ipynb", "ch30-learned-heads.ipynb",
              "ch31-depth-lab.ipynb", "ch31-decoder-block.ipynb", "ch30-multi-head-attention.ipynb",
              "test_exercises.py", "ch31-checks.ipynb", "ch30-checks.ipynb")


def pytest_collection_modifyitems(items):
    def rank(item):
        name = item.path.name
        return SLOW_FIRST.index(name) if name in SLOW_FIRST else len(SLOW_FIRST)

    items.sort(key=rank)  # stable: the order inside each module stays
