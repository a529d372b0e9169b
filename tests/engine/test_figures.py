"""What passes for a figure (autograder/engine/figures.py): an image and its text, nothing else."""
import pytest

from autograder.engine import kernel
from support.attacks import needs_bubblewrap  # noqa: F401

pytestmark = pytest.mark.slow


def test_only_an_image_and_its_text_pass_for_a_figure():
    png = "iVBORw0KGgoAAAA"
    good = [{"image/png": png, "text/plain": "a curve"},
            {"text/html": f'<img src="data:image/png;base64,{png}" alt="A curve &amp; dots.">',
             "text/plain": "A curve"}]
    bad = [{"text/plain": "x" * 100}, {"image/png": png, "text/markdown": "# x"},
           {"image/png": png + "<"}, {"image/svg+xml": "<svg/>"},
           {"text/html": f'<img src="data:image/png;base64,{png}" alt="x"><b>more</b>'},
           {"text/html": f'<img src="data:image/png;base64,{png}" alt="x" onerror="y">'},
           {"image/png": ["not", "a", "string"]}]
    assert all(kernel.is_figure({"output_type": "display_data", "data": d}) for d in good)
    assert not any(kernel.is_figure({"output_type": "display_data", "data": d}) for d in bad)
    assert not kernel.is_figure({"output_type": "stream", "data": good[0]})
