"""Which rater plays which part in an agreement report: the humans compared, the judges, the
reference (a rater or ``"consensus"``) and the humans of the ceiling, from the raters' kinds;
and the one sentence when a rubric has no ratings at all, for
:func:`judgekit.agreement.report.agreement_report` (every figure, or the gate's); pure and light
(no numpy)."""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import Any

from judgekit.errors import JudgekitError
from judgekit.store.variants import is_variant_rater


@dataclass(frozen=True)
class Roles:
    """The raters of a report: ``humans`` compared with the reference (the reference left out),
    ``judges``, ``reference`` (a rater id or ``"consensus"``), ``ceiling_humans`` (a human
    reference is one of them, compared like the others) and ``ref_info`` (the report's
    ``reference`` entry)."""

    humans: list[Any]
    judges: list[Any]
    reference: Any
    ceiling_humans: list[Any]
    ref_info: dict[str, Any]


def rater_roles(kinds: Mapping[Any, str], rubric_id: str, *, humans: Sequence[Any] | None,
                judges: Sequence[Any] | None, reference: Any) -> Roles:
    """The :class:`Roles` of raters of ``kinds`` (rater -> human | judge | reference).
    ``humans`` / ``judges`` None: every human / every judge but perturbed variants
    (judgekit probe); ``reference`` None: the one reference rater, else ``"consensus"``. A named
    rater without ratings, or a consensus without humans, is one :class:`JudgekitError`."""
    all_humans = [r for r, k in kinds.items() if k == "human"]
    all_judges = [r for r, k in kinds.items() if k == "judge"]
    refs = [r for r, k in kinds.items() if k == "reference"]
    humans = list(humans) if humans is not None else all_humans
    judges = list(judges) if judges is not None else [r for r in all_judges if not is_variant_rater(r)]
    for name, wanted, have in (("human", humans, all_humans + refs), ("judge", judges, all_judges)):
        missing = [r for r in wanted if r not in have]
        if missing:
            raise JudgekitError(
                f"{name.capitalize()} rater {missing[0]!r} has no ratings under {rubric_id}; "
                f"known {name} raters: {', '.join(have) or 'none'}."
            )
    if reference is None:
        reference = refs[0] if len(refs) == 1 else "consensus"
    if reference != "consensus" and reference not in kinds:
        raise JudgekitError(
            f"Reference rater {reference!r} has no ratings under {rubric_id}; use one of "
            f"{', '.join(refs + all_humans) or 'none'} or 'consensus'."
        )
    ref_is_human = reference != "consensus" and kinds[reference] == "human"
    ceiling_humans = [h for h in humans if h != reference or ref_is_human]
    if ref_is_human and reference not in ceiling_humans:
        ceiling_humans.append(reference)
    humans = [h for h in humans if h != reference]
    if reference == "consensus":
        if not humans:
            raise JudgekitError(
                f"No human ratings under {rubric_id} to form a reference; import human labels first."
            )
        ref_info: dict[str, Any] = {"rater": None, "kind": "consensus"}
    else:
        ref_info = {"rater": reference, "kind": "adjudicated" if kinds[reference] == "reference" else "human"}
    return Roles(humans, judges, reference, ceiling_humans, ref_info)


def no_ratings_error(rubric_id: str, rubric_ref: str, older: Sequence[str]) -> JudgekitError:
    """The sentence for a rubric (``id``, ``id@hash``) with no ratings in the store; ``older``:
    the hashes of older edits of it that do have ratings (a hint to re-import under this edit)."""
    hint = (
        f" (there are ratings under an older edit of {rubric_id}, hash {', '.join(older)}: the "
        "rubric file changed since they were made; re-import them under this edit or use the "
        "rubric file they were made with)"
        if older else ""
    )
    return JudgekitError(
        f"No ratings under rubric {rubric_ref} in the store{hint}; import some with "
        "`judgekit import` or run a panel with `judgekit judge`."
    )
