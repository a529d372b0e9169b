"""What a notebook's prose says, tied to what the notebook computes.

``tests/claims/<assignment-id>.py`` lists the claims of one solution notebook::

    from claims import Claim, Published

    CLAIMS = [
        Claim(quote="about 90%", value="heldout_alignment", low=0.85, high=0.95),
        Claim(quote="beats the final-state decoder at every length",
              value="min(attention_acc - final_acc)", low=0.0, every_seed=True),
    ]
    PUBLISHED = [
        Published(quote="26.75 BLEU", source="Bahdanau et al. (2015), Table 1"),
    ]

``tests/test_claims.py`` runs the solution notebook in a fresh kernel (once with its ``SEED = 0``
line, and with seeds 1 to 4 when a claim has ``every_seed=True``; once more with a ``setting`` line
for claims about an optional run), evaluates every ``value`` in the notebook's namespace and checks
it against its bounds; checks that every ``quote`` appears in a markdown cell; and checks that every
number the prose states as a result is covered by a claim's or a published number's quote (see
docs/authoring.md, "Claims").
"""
import dataclasses
import importlib.util
import math
import re
from pathlib import Path

FOLDER = Path(__file__).resolve().parent
SETTING = re.compile(r"([A-Z][A-Z0-9_]*) = (.+)")


@dataclasses.dataclass(frozen=True)
class Claim:
    """A number or a direction the prose states, and the value of the executed notebook it rests on.

    quote: words of a markdown cell of the solution notebook, verbatim up to whitespace.
    value: a Python expression over the namespace of the executed notebook; a number (or a bool).
    low, high: the bounds the value must lie in (inclusive) at ``SEED = 0``.
    every_seed: also at seeds 1 to 4 (every direction the text asserts: "beats", "falls", "below").
    setting: for a claim about an optional run, the line that switches it on, such as
        ``"LONGER_RUN = True"``: the notebook's line ``LONGER_RUN = ...`` is replaced by it.
    """
    quote: str
    value: str
    low: float = -math.inf
    high: float = math.inf
    every_seed: bool = False
    setting: str = ""

    def __post_init__(self):
        if not self.quote.strip() or not self.value.strip():
            raise ValueError("a claim needs a quote and a value")
        if not (self.low <= self.high) or (math.isinf(self.low) and math.isinf(self.high)):
            raise ValueError(f"claim {self.quote!r}: give low and/or high, with low <= high")
        if self.setting and not SETTING.fullmatch(self.setting):
            raise ValueError(f"claim {self.quote!r}: a setting is one line NAME = value")

    def holds(self, value):
        return value is not None and not math.isnan(value) and self.low <= value <= self.high

    def bounds(self):
        if self.low == self.high:
            return f"= {self.low:g}"
        parts = ([f">= {self.low:g}"] if not math.isinf(self.low) else []) + (
            [f"<= {self.high:g}"] if not math.isinf(self.high) else [])
        return " and ".join(parts)


@dataclasses.dataclass(frozen=True)
class Published:
    """A number the prose quotes from a publication (or a vendor's specification), with its source.
    Nothing is computed: the entry documents where the number comes from, and exempts it from the
    rule that every number in prose is computed by the notebook."""
    quote: str
    source: str

    def __post_init__(self):
        if not self.quote.strip() or not self.source.strip():
            raise ValueError("a published number needs a quote and a source")


SEEDS = (0, 1, 2, 3, 4)


def load(assignment):
    """The claims module of ``assignment`` (with ``CLAIMS`` and ``PUBLISHED``, both lists, possibly
    empty), or None when the assignment has no claims file."""
    path = FOLDER / f"{assignment}.py"
    if not path.exists():
        return None
    spec = importlib.util.spec_from_file_location(f"claims_{assignment.replace('-', '_')}", path)
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    module.CLAIMS = list(getattr(module, "CLAIMS", []))
    module.PUBLISHED = list(getattr(module, "PUBLISHED", []))
    return module
