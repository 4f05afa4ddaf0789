"""Fixtures: the two worked examples built through the public API."""

import pytest

from worked_examples import build_chapter30_attention, build_chapter31_block


@pytest.fixture
def attention30():
    return build_chapter30_attention()


@pytest.fixture
def block31():
    return build_chapter31_block()
