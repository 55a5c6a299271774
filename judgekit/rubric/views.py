"""Views of a rubric: a named collapse of its codes (``views:`` in the rubric YAML), used to
compare a judge rated under the full rubric with people who labelled only the view.

A view is itself a (nominal) rubric, :class:`ViewRubric`:

* its codes are the view codes, in the order they first appear in ``codes``; in a view of two
  codes the ``positive`` class has the value 1 and the other 0 (so the agreement report's
  per-class figures, ``positive_class``, are about it), in a larger view each code has the mean
  value of the rubric codes it collapses;
* its id is ``<name>@<version>:<view>`` (``refusal@1:binary``) — never a rubric's own id, which
  always ends in the version number — and its hash covers the rubric's hash, the view's name and
  its definition, so editing the rubric or the view voids what was made under the view.

**Storage.** ``judgekit import --view NAME`` stores labels given in the view's codes under the
view's id and hash (the ``rubric`` / ``rubric_hash`` columns), so they are never read as
full-rubric labels (every reader of the full rubric asks for ``refusal@1`` and its hash). Ratings
under the full rubric are never rewritten: :class:`ViewSource` maps them into the view when it
reads (``agree``/``gate``/``report`` ``--view``), next to the labels stored under the view.

A verdict made under a view records the view's id and hash as its ``rubric`` and
``rubric_hash`` (and ``view``: the view's name and the full rubric's id and hash), so it never
matches a use of the full rubric.
"""

from __future__ import annotations

import hashlib
import json
from functools import cached_property
from typing import TYPE_CHECKING, Any

from pydantic import Field

from judgekit.errors import JudgekitError, excerpt
from judgekit.rubric.model import Label, Rubric

if TYPE_CHECKING:
    import pandas as pd


class ViewRubric(Rubric):
    """The view ``view_name`` of ``base`` as a rubric (see the module docstring)."""

    view_name: str
    base: Rubric = Field(exclude=True)

    @property
    def id(self) -> str:
        return f"{self.base.id}:{self.view_name}"

    @cached_property
    def hash(self) -> str:
        view = self.base.views[self.view_name]
        payload = {"rubric": self.base.ref, "view": self.view_name, "definition": view.model_dump(mode="json")}
        blob = json.dumps(payload, sort_keys=True, ensure_ascii=False).encode()
        return hashlib.sha256(blob).hexdigest()[:12]

    @cached_property
    def mapping(self) -> dict[str, str]:
        """Full-rubric code → view code."""
        return dict(self.base.views[self.view_name].codes)

    def view_info(self) -> dict[str, str]:
        """What a verdict records about the view: its name, the full rubric's id and hash."""
        return {"name": self.view_name, "rubric": self.base.id, "rubric_hash": self.base.hash}


def _view_names(rubric: Rubric) -> str:
    return ", ".join(rubric.views) or "none"


def rubric_view(rubric: Rubric, name: str, *, where: str = "--view") -> ViewRubric:
    """The view ``name`` of ``rubric``; an unknown name is one sentence naming ``where``."""
    if isinstance(rubric, ViewRubric):
        raise JudgekitError(f"{where}: {rubric.id} is already a view; name the full rubric.")
    view = rubric.views.get(name)
    if view is None:
        raise JudgekitError(
            f"{where}: rubric {rubric.id} has no view {excerpt(name)} (its views: {_view_names(rubric)}); "
            "use one of them or add it under 'views:' in the rubric file."
        )
    vcodes = view.view_codes
    if len(vcodes) == 2:
        values = {c: 1.0 if c == view.positive else 0.0 for c in vcodes}
    else:
        values = {c: round(sum(rubric.values[k] for k, v in view.codes.items() if v == c)
                           / sum(1 for v in view.codes.values() if v == c), 6) for c in vcodes}
    labels = [
        Label(code=c, value=values[c],
              description="; ".join(lab.description.strip() for lab in rubric.labels if view.codes[lab.code] == c))
        for c in vcodes
    ]
    return ViewRubric(
        name=rubric.name, version=rubric.version, title=f"{rubric.title} — view {name}",
        level="nominal", description=view.description, instructions=rubric.instructions,
        labels=labels, aliases=dict(view.aliases), view_name=name, base=rubric,
        source=rubric.source,
    )


def _to_view(ratings: pd.DataFrame, view: ViewRubric) -> pd.DataFrame:
    """Full-rubric ratings mapped into ``view``: each label to its view code and value, the
    ``rubric``/``rubric_hash`` columns to the view's (a label outside the rubric cannot occur:
    the store holds codes)."""
    import pandas as pd
    out = ratings.copy()
    labels = [None if lab is None or lab != lab else view.mapping[str(lab)] for lab in out["label"]]
    out["label"] = pd.Series(labels, index=out.index, dtype=object)
    out["value"] = [None if lab is None else view.values[lab] for lab in labels]
    out["rubric"] = view.id
    out["rubric_hash"] = view.hash
    return out


class ViewSource:
    """A store seen through a view: ``ratings(rubric=view)`` gives the labels stored under the
    view together with the full rubric's ratings mapped into it (:func:`_to_view`); everything
    else is the store's. The same rater may not rate the same item and trial both ways with
    labels that disagree in the view (one sentence, naming them)."""

    def __init__(self, store: Any, view: ViewRubric) -> None:
        self.store = store
        self.view = view

    def __getattr__(self, name: str) -> Any:
        return getattr(self.store, name)

    def _is_view(self, rubric: Any) -> bool:
        return rubric is self.view or (isinstance(rubric, ViewRubric) and rubric.id == self.view.id
                                       and rubric.hash == self.view.hash)

    def ratings(self, *, rubric: Any = None, rater_kind: Any = None, rater_ids: Any = None,
                any_hash: bool = False) -> pd.DataFrame:
        import pandas as pd
        if not self._is_view(rubric):
            return self.store.ratings(rubric=rubric, rater_kind=rater_kind, rater_ids=rater_ids,
                                      any_hash=any_hash)
        kw = {"rater_kind": rater_kind, "rater_ids": None if rater_ids is None else list(rater_ids)}
        native = self.store.ratings(rubric=self.view, **kw)
        mapped = _to_view(self.store.ratings(rubric=self.view.base, **kw), self.view)
        if native.empty:
            return mapped.reset_index(drop=True)
        if mapped.empty:
            return native.reset_index(drop=True)
        key = ["item_id", "rater_id", "trial"]
        both = native.merge(mapped, on=key, suffixes=("", "_full"))
        same = (both["label"].where(both["label"].notna(), "") == both["label_full"].where(
            both["label_full"].notna(), "")) & (both["status"] == both["status_full"])
        clash = both[~same]
        if not clash.empty:
            r = clash.iloc[0]
            raise JudgekitError(
                f"Rater {r['rater_id']!r} rated item {r['item_id']!r} both under {self.view.base.id} "
                f"({r['label_full']}) and under its view {self.view.view_name} ({r['label']}), and "
                "the two disagree; import the labels you mean to keep into a new store "
                "(import … --store NEW.db) and run this there: an import adds labels and never "
                "deletes one."
            )
        dup = mapped.set_index(key).index.isin(native.set_index(key).index)
        return pd.concat([native, mapped[~dup]], ignore_index=True)

    def stale_rubric_hashes(self, rubric: Any) -> list[str]:
        if not self._is_view(rubric):
            return list(self.store.stale_rubric_hashes(rubric))
        return [*self.store.stale_rubric_hashes(self.view.base), *self.store.stale_rubric_hashes(self.view)]
