"""The options every analysis shares: what the item columns mean, and how the bootstrap runs.

An analysis reads its items through :class:`ItemColumns` (which column names the model, the
prompt unit, the sample, the turn and the benign look-alike flag, and which columns slice the
tables) and draws its intervals as :class:`Resampling` says (how many replicates, from which
seed, and who hears how far it got). Both are frozen: pass one object to every analysis of a
study. The trust guard's options are :class:`judgekit.analysis.trust.TrustContext`.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from dataclasses import dataclass


@dataclass(frozen=True)
class ItemColumns:
    """The item columns an analysis reads, by what they mean.

    ``prompt`` None: the prompt unit is ``conversation_id`` when the items have it, else
    ``prompt_id`` (:func:`judgekit.analysis.frames.unit_columns`). ``by``: the columns to slice
    the tables by (``--by``). ``sample_group``: a column (provenance, day) splitting each prompt's
    samples into groups reported separately, for samples that are not exchangeable.
    """

    model: str = "model"
    prompt: str | None = None
    sample: str = "sample"
    turn: str = "turn"
    lookalike: str = "benign_lookalike"
    by: Sequence[str] = ()
    sample_group: str | None = None


@dataclass(frozen=True)
class Resampling:
    """The bootstrap of an analysis: ``n_resamples`` replicates drawn from ``seed``;
    ``progress(advance, total)`` is called as replicates finish."""

    n_resamples: int = 1000
    seed: int = 0
    progress: Callable[[int, int], None] | None = None
