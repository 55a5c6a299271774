"""Coverage: how much of the human-rated part of a slice a judge actually rated.

A judge is validated on the items that carry a human judgement: the *in-scope* items of a slice
are those with a reference label or at least one human rating. Among them each item is, for a
judge, exactly one of: ``rated`` (an ok label; after trials are collapsed to their majority),
``abstained`` (no parseable answer, or trials that tie), ``errored`` (every trial failed) or
``not_attempted`` (no rating row at all). So ``rated + abstained + errored + not_attempted ==
in_scope``. ``share = rated / in_scope`` carries a Wilson score interval (E. B. Wilson (1927),
Probable inference, the law of succession, and statistical inference, JASA 22, 209-212), the
interval for a binomial proportion that keeps its coverage near 0 and 1 where the normal
approximation fails. ``rated_out_of_scope`` counts the judge's ok ratings on items no human or
reference rated (they are not validated by anything in the report).

A judge that rated 250 of 300 in-scope items reads ``rated 250, in_scope 300, share 0.833``,
never "250 of 250".
"""

from __future__ import annotations

from typing import Any

import numpy as np

from judgekit.agreement.figures import wilson_fig


def coverage(in_scope: np.ndarray, rated: np.ndarray, status: np.ndarray, *, confidence: float) -> dict[str, Any]:
    """Coverage of one judge on one slice.

    ``in_scope`` and ``rated`` are boolean arrays over the slice's items; ``status`` the judge's
    collapsed status per item (``"ok"``, ``"abstain"``, ``"error"``, or missing when it has no
    rating row).
    """
    in_scope = np.asarray(in_scope, dtype=bool)
    rated = np.asarray(rated, dtype=bool)
    status = np.asarray(status, dtype=object)
    n = int(in_scope.sum())
    n_rated = int((rated & in_scope).sum())
    abstained = int(((status == "abstain") & in_scope & ~rated).sum())
    errored = int(((status == "error") & in_scope & ~rated).sum())
    return {
        "in_scope": n,
        "rated": n_rated,
        "abstained": abstained,
        "errored": errored,
        "not_attempted": n - n_rated - abstained - errored,
        "rated_out_of_scope": int((rated & ~in_scope).sum()),
        "share": wilson_fig(n_rated, n, confidence, "no item of this slice carries a reference or human rating"),
    }
