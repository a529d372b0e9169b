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

``tests/assignments/test_claims.py`` runs the solution notebook in a fresh kernel (once with its
``SEED = 0`` line, and with the other seeds of :data:`TEST_SEEDS` when a claim has
``every_seed=True``; once more with a ``setting`` line for claims about another seed), evaluates
every ``value`` in the notebook's namespace and checks it against its bounds; checks that every
``quote`` appears in a markdown cell; and checks that every number the prose states as a result is
covered by a claim's or a published number's quote (see docs/authoring.md, "Claims").

The seeds ``make test`` runs are few (:data:`TEST_SEEDS`). ``make claims`` (which ``make bench``
runs too) checks every direction over a sweep of at least ten seeds (:func:`sweep_seeds`, seeds 0
to 9 unless ``CLAIM_SEEDS`` names others, such as ``CLAIM_SEEDS=10-29`` or ``CLAIM_SEEDS=5,6,7``):
a claim with ``every_seed=True`` must hold at every one of them, and a claim with a ``rate`` at the
share of them it states. The seeds are not special: the claims must hold at any seeds drawn. It
also makes each optional run (a ``setting`` such as ``LONGER_RUN = True``) at ``SEED = 0`` and
checks the claims about it and the figures it draws: an optional run is the notebook's longest
(12's takes more than a minute), and ``make test`` runs the notebooks as committed.
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
    every_seed: at every seed, not only 0 (every direction the text asserts: "beats", "falls",
        "below"): checked at :data:`TEST_SEEDS` by ``make test`` and at every seed of the sweep.
    rate: ``(low share, high share)`` for a direction the text states as a rate over seeds ("at
        7 or more of every 10 seeds", "at most seeds"): the share of the sweep's seeds at which the
        value lies within ``low`` and ``high`` must lie within the rate's two shares (inclusive).
        A rate claim is checked by the sweep only; state it with margin, since the sweep may be
        run at other seeds.
    setting: for a claim about an optional run, the line that switches it on, such as
        ``"LONGER_RUN = True"``: the notebook's line ``LONGER_RUN = ...`` is replaced by it
        (checked by ``make claims``, with the figures that run draws); ``"SEED = 9"`` for a claim
        about one other seed (checked by ``make test``).
    """
    quote: str
    value: str
    low: float = -math.inf
    high: float = math.inf
    every_seed: bool = False
    setting: str = ""
    rate: tuple[float, float] | None = None

    def __post_init__(self):
        if not self.quote.strip() or not self.value.strip():
            raise ValueError("a claim needs a quote and a value")
        if not (self.low <= self.high) or (math.isinf(self.low) and math.isinf(self.high)):
            raise ValueError(f"claim {self.quote!r}: give low and/or high, with low <= high")
        if self.setting and not SETTING.fullmatch(self.setting):
            raise ValueError(f"claim {self.quote!r}: a setting is one line NAME = value")
        if self.rate is not None:
            low, high = self.rate
            if self.every_seed or not (0.0 <= low <= high <= 1.0) or (low, high) == (0.0, 1.0):
                raise ValueError(f"claim {self.quote!r}: a rate is (low share, high share) within "
                                 f"[0, 1], not both 0 and 1, and not with every_seed")

    @property
    def optional_run(self):
        """Whether the claim is about an optional run: its setting switches on something other
        than a seed (``LONGER_RUN = True``), which ``make claims`` makes, not ``make test``."""
        return bool(self.setting) and SETTING.fullmatch(self.setting).group(1) != "SEED"

    @property
    def across_seeds(self):
        """Whether the claim is about more seeds than 0 (a direction or a rate)."""
        return self.every_seed or self.rate is not None

    def rate_holds(self, values):
        """Whether the share of ``values`` (one per seed) within the bounds lies in the rate."""
        share = sum(self.holds(v) for v in values) / len(values)
        return self.rate[0] <= share <= self.rate[1], share

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


TEST_SEEDS = (0, 1)   # what `make test` runs; the sweep (`make claims`) runs sweep_seeds()
SWEEP_SIZE = 10       # at least this many seeds in a sweep


def sweep_seeds(text=None):
    """The seeds of the sweep: ``CLAIM_SEEDS`` (``"10-29"``, ``"5,6,7"``, or both mixed), else 0
    to 9. Fewer than :data:`SWEEP_SIZE` seeds is refused: a rate over three seeds says little."""
    import os
    text = os.environ.get("CLAIM_SEEDS", "") if text is None else text
    if not text.strip():
        return tuple(range(SWEEP_SIZE))
    seeds = []
    for part in text.split(","):
        first, _, last = part.strip().partition("-")
        seeds += range(int(first), int(last or first) + 1)
    seeds = tuple(dict.fromkeys(seeds))
    if len(seeds) < SWEEP_SIZE:
        raise ValueError(f"CLAIM_SEEDS={text!r} names {len(seeds)} seeds; a sweep needs at least "
                         f"{SWEEP_SIZE}")
    return seeds


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
