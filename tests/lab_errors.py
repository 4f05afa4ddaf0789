"""One check for the rows of the labs' bad-settings tables."""

from __future__ import annotations

import pytest

from llm_from_scratch.errors import DepthLabError


def assert_depth_lab_error(call, words, capfd) -> None:
    """``call()`` raises a ``DepthLabError`` whose message holds every word, and
    nothing reaches stderr (no NumPy warning on the way)."""
    with pytest.raises(DepthLabError) as caught:
        call()
    for word in words:
        assert word in str(caught.value), (word, str(caught.value))
    assert capfd.readouterr().err == ""
