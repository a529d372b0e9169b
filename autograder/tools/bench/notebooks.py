"""Section 6: each solution notebook from a fresh kernel against its budget, a fresh kernel's first
figure with and without matplotlib's font list, and the attention kernels."""
from __future__ import annotations

import statistics
import time
from collections.abc import Collection

from ...engine import reference
from .measuring import _median, _peak, notebook_run
from .synthetic import course


def font_list_gain(repeats: int = 9) -> dict[str, float]:
    """Seconds a fresh sandboxed kernel takes to import numpy, pyplot and helpers.plots and draw
    one figure, with and without matplotlib's font list in its home (``KernelSession``'s
    ``seed_home``), alternating: ``{"with": median, "without": median}``."""
    from ...engine import kernel
    from ...sandbox import confinement
    fonts = kernel.matplotlib_font_list
    fonts.get()
    if fonts.thread is not None:
        fonts.thread.join(120)
    code = ("import numpy as np\nimport matplotlib.pyplot as plt\nfrom helpers import plots\n"
            "plt.figure(); plt.plot([1, 2])")
    mode = confinement.resolve_mode("auto")
    times: dict[str, list[float]] = {"with": [], "without": []}
    for _ in range(repeats):
        for how in times:
            session = kernel.KernelSession(mode=mode, visible=course().learner_packages,
                                           seed_home=how == "with")
            session.start()
            try:
                session.install_agent()
                started = time.perf_counter()
                session.execute(code, 60)
                times[how].append(time.perf_counter() - started)
            finally:
                session.shutdown()
    return {how: statistics.median(values) for how, values in times.items()}


def attention_kernels(repeats: int = 5) -> dict[str, float] | None:
    known = {a.name: a for a in course().assignments()}
    if "09-attention-at-scale" not in known:
        return None
    import numpy as np
    ns = reference.namespace(known["09-attention-at-scale"])
    ns3 = reference.namespace(known["03-qkv"]) if "03-qkv" in known else None
    rng = np.random.default_rng(0)
    results: dict[str, float] = {}
    T, d = 1024, 64
    Q, K, V = (rng.standard_normal((T, d)) for _ in range(3))
    if ns3 is not None:
        attention = ns3["scaled_dot_product_attention"]
        bare = _median(lambda: (Q @ K.T) @ V, repeats)
        full = _median(lambda: attention(Q, K, V), repeats)
        results["reference attention / two bare matmuls (T=1024, d=64)"] = full / bare
    T = 4096
    Q, K, V = (rng.standard_normal((T, d)) for _ in range(3))
    blockwise = ns["blockwise_attention"]
    naive = ns3["scaled_dot_product_attention"] if ns3 else None
    if naive is not None:
        t_naive = _median(lambda: naive(Q, K, V), max(1, repeats // 2))
        t_block = _median(lambda: blockwise(Q, K, V, 256), max(1, repeats // 2))
        m_naive = _peak(lambda: naive(Q, K, V))
        m_block = _peak(lambda: blockwise(Q, K, V, 256))
        results["blockwise / naive time (T=4096, block 256)"] = t_block / t_naive
        results["blockwise / naive peak memory (T=4096, block 256)"] = m_block / m_naive
        results["naive peak memory MiB"] = m_naive / 2**20
        results["blockwise peak memory MiB"] = m_block / 2**20
    return results


def notebook_times(repeats: int = 1, skip: Collection[str] = ()) -> dict[str, float]:
    """Seconds to run each solution notebook (but those in ``skip``) top to bottom from a fresh
    kernel, against its budget (:func:`notebook_budget`)."""
    return {assignment.name: statistics.median(notebook_run(assignment.solution)
                                               for _ in range(repeats))
            for assignment in course().assignments() if assignment.name not in skip}
