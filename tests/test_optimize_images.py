"""book/_ext/optimize_images.py: a figure as a palette PNG, exact when it has few colours."""

import io
import sys
from pathlib import Path

import numpy as np
from PIL import Image

sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "book" / "_ext"))
from optimize_images import palette_png


def png(array: np.ndarray) -> bytes:
    out = io.BytesIO()
    Image.fromarray(array.astype(np.uint8)).save(out, "PNG")
    return out.getvalue()


def pixels(data: bytes) -> np.ndarray:
    return np.asarray(Image.open(io.BytesIO(data)).convert("RGBA")).astype(int)


def test_few_colours_keep_every_pixel():
    rng = np.random.default_rng(0)
    colours = rng.integers(0, 256, size=(40, 3))
    rgb = colours[rng.integers(0, 40, size=(120, 200))]
    image = np.concatenate([rgb, np.full((120, 200, 1), 255)], axis=-1)
    data = png(image)
    smaller = palette_png(data)
    assert smaller is not None and len(smaller) < len(data)
    np.testing.assert_array_equal(pixels(smaller), pixels(data))


def test_a_figure_with_many_colours_moves_by_a_fraction_of_a_grey_level():
    from matplotlib.figure import Figure

    figure = Figure(figsize=(4, 3), dpi=100, facecolor="white")
    axes = figure.add_subplot()
    axes.imshow(np.arange(64.0).reshape(8, 8), cmap="viridis")
    axes.set_title("Рис. 30.1: веса A")
    out = io.BytesIO()
    figure.savefig(out, format="png")
    data = out.getvalue()
    smaller = palette_png(data)
    assert smaller is not None and len(smaller) < 0.7 * len(data)
    error = np.abs(pixels(smaller) - pixels(data))
    assert error.mean() < 0.5 and error.max() < 64


def test_transparency_is_left_alone():
    image = np.zeros((10, 10, 4))
    image[..., 3] = 128
    assert palette_png(png(image)) is None


def test_a_downloadable_notebook_keeps_its_cells_and_gets_smaller_figures(tmp_path):
    import base64
    import json

    from optimize_images import optimize_notebook

    rng = np.random.default_rng(1)
    colours = rng.integers(0, 256, size=(12, 3))
    image = np.concatenate([colours[rng.integers(0, 12, size=(60, 90))], np.full((60, 90, 1), 255)], axis=-1)
    figure = base64.b64encode(png(image)).decode("ascii")
    notebook = {"cells": [
        {"cell_type": "code", "source": ["plot()"], "metadata": {"tags": ["x"]}, "outputs": [
            {"output_type": "display_data", "data": {"image/png": figure, "text/plain": ["<Figure>"]},
             "metadata": {"image/png": {"width": 45, "height": 30}}}]},
        {"cell_type": "markdown", "source": ["Текст"], "metadata": {}}], "metadata": {}, "nbformat": 4,
        "nbformat_minor": 5}
    path = tmp_path / "page.ipynb"
    path.write_text(json.dumps(notebook, ensure_ascii=False), encoding="utf-8")
    optimize_notebook(path)
    after = json.loads(path.read_text(encoding="utf-8"))
    stored = after["cells"][0]["outputs"][0]["data"]["image/png"]
    assert len(stored) < len(figure)
    assert np.array_equal(pixels(base64.b64decode(stored)), pixels(base64.b64decode(figure)))
    after["cells"][0]["outputs"][0]["data"]["image/png"] = figure
    assert after == notebook, "only the PNG changed"
