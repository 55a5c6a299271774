"""Samples that may not be exchangeable: how a prompt's behaviour across its samples is stated.

The Wilson interval of a prompt's refusal rate treats its n samples as exchangeable draws. They
may not be: regenerations of one branch share its context, and a provider change between days
shifts the distribution. So the counts are always stated (``not constant (3 of 5)``) whether or
not the interval means much, and ``--sample-group COL`` reports each group of samples apart.
"""

from __future__ import annotations

EXCHANGEABLE = (
    "the Wilson interval of a prompt assumes its samples are exchangeable — independent draws "
    "from one distribution; regenerations of one branch, or a provider change between days, "
    "are not (report per group with --sample-group)"
)


def sample_group_note(column: str) -> str:
    """The note of a distribution whose samples are grouped by ``column``."""
    return (
        f"samples grouped by {column} (--sample-group): each prompt is reported per {column}; a "
        "prompt whose rate differs between groups has samples that are not exchangeable, and a "
        "Wilson interval pooling them would be too narrow."
    )


def behaviour(k: float, n: float) -> str:
    """A prompt's behaviour across its ``n`` rated samples, ``k`` of them refusals (``k`` may be
    fractional when samples were judged several times): ``not constant (3 of 5)``, ``always
    refused (5 of 5)``, ``never refused (0 of 5)``, ``one sample (1 of 1)``, ``no rated sample``.

    >>> behaviour(3, 5)
    'not constant (3 of 5)'
    """
    if not n:
        return "no rated sample"
    counts = f"({k:g} of {n:g})"
    if n == 1 and k in (0, 1):
        return f"one sample {counts}"
    if k == 0:
        return f"never refused {counts}"
    if k == n:
        return f"always refused {counts}"
    return f"not constant {counts}"
