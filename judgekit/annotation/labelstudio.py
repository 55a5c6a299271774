"""Label Studio bridge: rubric → labeling config, push items as tasks, pull annotations back.

* :func:`label_config` renders one labeling interface from one or several rubrics (the same
  YAML files the judges use): the conversation turn by turn, the response, one choice control per
  rubric (codes in rubric order, descriptions shown, examples as hints) and an optional comment.
* :func:`push` creates or reuses a project and imports items as tasks carrying ``item_id`` and
  metadata — never a judge's output: annotators are blind to the judges and to each other. Pushing
  again adds only items the project does not have; tasks go in chunks, in shuffled order.
* :func:`pull` reads annotations through the REST API (paginated) or from an export file (JSON,
  JSON_MIN, CSV), maps each annotator to a stable ``rater_id`` (email, else username), skips
  cancelled annotations, keeps an annotator's latest annotation per task, validates every choice
  against the rubric through :func:`judgekit.data.normalise_ratings`, and writes human ratings in
  one transaction. Pulling twice changes nothing; a revised label replaces the stored one and the
  old one goes to ``rating_history``.

The server address and token come from arguments or the environment (``LABEL_STUDIO_URL``,
``LABEL_STUDIO_API_KEY``); neither is written to the store or printed. HTTP is plain ``httpx``
(installed with the ``labelstudio`` extra) against the documented REST API, with
``Authorization: Token <token>``.
"""

from __future__ import annotations

import contextlib
import json
import os
import random
import re
import time
from collections.abc import Iterator, Mapping, Sequence
from dataclasses import dataclass, field
from datetime import datetime
from pathlib import Path
from typing import TYPE_CHECKING, Any
from xml.sax.saxutils import escape, quoteattr

import pandas as pd

from judgekit.data import normalise_ratings
from judgekit.errors import JudgekitError
from judgekit.rubric import Rubric, load_rubric
from judgekit.store import RATING_COLUMNS, Store

if TYPE_CHECKING:
    import httpx

ENV_URL = "LABEL_STUDIO_URL"
ENV_TOKEN = "LABEL_STUDIO_API_KEY"
#: name of the free-text control in generated configs (its text becomes the rating's rationale).
COMMENT_CONTROL = "comment"
_MARKER = "judgekit-rubrics:"
_TEXT_COLUMNS = ("item_id", "prompt", "messages", "response", "content_hash")
#: metadata columns that look like someone's label (or a judge's reasons for it) are never sent
#: to annotators.
_LABELLIKE = re.compile(
    r"(label|judge|score|rating|annotation|verdict|pred|gold|answer|rationale|explanation|refus)",
    re.I,
)


# ------------------------------------------------------------------ config
def label_config(rubrics: Sequence[Rubric], *, comment: bool = True) -> str:
    """The Label Studio labeling config (XML) for rating ``rubrics`` in one pass.

    Each rubric becomes a ``<Choices name="<rubric name>">`` control with one ``<Choice>`` per
    label in rubric order (``value`` is the code, the description is shown, examples are the
    hint). The task shows the conversation (``$messages``, turn by turn) and ``$response``.
    """
    rubs = _check_rubrics(rubrics)
    out = [
        "<View>",
        "  <Style>.jk-instructions h1, .jk-instructions h2, .jk-instructions h3, .jk-instructions h4,"
        " .jk-instructions h5, .jk-instructions h6 { font-size: 15px; font-weight: normal;"
        " line-height: 1.4; }</Style>",
        '  <Header value="Conversation" size="4"/>',
        '  <Paragraphs name="conversation" value="$messages" layout="dialogue"'
        ' nameKey="role" textKey="content"/>',
        '  <Header value="Response to rate" size="4"/>',
        '  <View style="border: 1px solid #ccc; padding: 8px; white-space: pre-wrap">',
        '    <Text name="response" value="$response"/>',
        "  </View>",
    ]
    for r in rubs:
        out.append('  <View style="margin-top: 16px">')
        out.append(f"    <Header value={quoteattr(r.title)} size=\"4\"/>")
        instructions = " ".join(r.instructions.split())
        if r.priority_ordered:
            instructions += " When several labels apply, choose the first one listed."
        out.append('    <View className="jk-instructions">')
        out.append(f"      <Header value={quoteattr(instructions)} size=\"6\" underline=\"false\"/>")
        out.append("    </View>")
        out.append(
            f'    <Choices name={quoteattr(r.name)} toName="response" choice="single-radio"'
            ' required="true" showInline="false">'
        )
        for lab in r.labels:
            desc = " ".join(lab.description.split())
            html = f"<b>{escape(lab.code)}</b> — {escape(desc)}"
            attrs = f"value={quoteattr(lab.code)} html={quoteattr(html)}"
            if lab.examples:
                attrs += " hint=" + quoteattr("Example: " + " | ".join(lab.examples))
            out.append(f"      <Choice {attrs}/>")
        out.append("    </Choices>")
        out.append("  </View>")
    if comment:
        out.append(
            f'  <TextArea name="{COMMENT_CONTROL}" toName="response" rows="2" editable="true"'
            ' maxSubmissions="1" placeholder="Optional comment (why this label?)"/>'
        )
    out.append("</View>")
    return "\n".join(out)


def _check_rubrics(rubrics: Sequence[Rubric | str]) -> list[Rubric]:
    rubs = [load_rubric(r) for r in rubrics]
    if not rubs:
        raise JudgekitError("Name at least one rubric with --rubric.")
    names = [r.name for r in rubs]
    dup = sorted({n for n in names if names.count(n) > 1})
    if dup:
        raise JudgekitError(f"Rubric {dup[0]!r} is given twice; rate each rubric once per project.")
    if COMMENT_CONTROL in names:
        raise JudgekitError(f"A rubric named {COMMENT_CONTROL!r} clashes with the comment box; rename it.")
    return rubs


def rubric_marker(rubrics: Sequence[Rubric]) -> str:
    """The line written into a project's description that records the rubrics and hashes."""
    return f"{_MARKER} " + ", ".join(r.ref for r in rubrics)


def parse_marker(description: str | None) -> list[str]:
    """Rubric refs (``name@version#hash``) recorded in a project description, or ``[]``."""
    for line in (description or "").splitlines():
        if line.strip().startswith(_MARKER):
            return [p.strip() for p in line.split(":", 1)[1].split(",") if p.strip()]
    return []


# ------------------------------------------------------------------- tasks
def task_data(items: pd.DataFrame, *, meta: Sequence[str] | None = None) -> list[dict[str, Any]]:
    """Task ``data`` dicts for items: ``item_id``, ``messages``, ``response`` and metadata.

    A single prompt becomes a one-turn conversation. ``meta`` names the metadata columns to carry
    (default: every metadata column except label-like names such as ``gpt4_label`` — annotators
    must not see anyone's labels).
    """
    if "item_id" not in items.columns:
        raise JudgekitError("Items to push need an 'item_id' column.")
    if "response" not in items.columns:
        raise JudgekitError("Items to push need a 'response' column (the text people rate).")
    if meta is None:
        meta = [c for c in items.columns if c not in _TEXT_COLUMNS and not _LABELLIKE.search(str(c))]
    else:
        missing = [c for c in meta if c not in items.columns]
        if missing:
            raise JudgekitError(f"--meta names {missing[0]!r}, which is not an item column; fix it.")
        clash = [c for c in meta if c in _TEXT_COLUMNS]
        if clash:
            raise JudgekitError(f"--meta names {clash[0]!r}, which is always sent; remove it.")
    out = []
    for rec in items.to_dict("records"):
        iid = str(rec["item_id"])
        msgs = rec.get("messages")
        if _missing(msgs):
            prompt = rec.get("prompt")
            if _missing(prompt):
                raise JudgekitError(f"Item {iid!r} has neither a prompt nor messages; add one.")
            msgs = [{"role": "user", "content": str(prompt)}]
        elif isinstance(msgs, str):
            try:
                msgs = json.loads(msgs)
            except ValueError:
                raise JudgekitError(f"Item {iid!r}: 'messages' is not a JSON list; fix it.") from None
        if not isinstance(msgs, list) or not all(isinstance(m, dict) for m in msgs):
            raise JudgekitError(f"Item {iid!r}: 'messages' must be a list of {{role, content}}.")
        response = rec.get("response")
        if _missing(response):
            raise JudgekitError(f"Item {iid!r} has no response text; people need the text to rate.")
        data: dict[str, Any] = {
            "item_id": iid,
            "messages": [
                {"role": str(m.get("role", "user")), "content": str(m.get("content", ""))}
                for m in msgs
            ],
            "response": str(response),
        }
        for c in meta:
            v: Any = rec.get(c)
            if not _missing(v):
                data[str(c)] = _json_safe(v)
        out.append(data)
    return out


def _json_safe(v: Any) -> Any:
    """A metadata value as JSON can carry it (numpy scalars unwrapped, anything else as text)."""
    if hasattr(v, "item") and not isinstance(v, list | dict):
        v = v.item()
    if isinstance(v, str | int | float | bool | list | dict):
        return v
    return str(v)


def _missing(v: object) -> bool:
    if v is None:
        return True
    if isinstance(v, float) and v != v:
        return True
    return v is pd.NA


# ------------------------------------------------------------------ client
class LabelStudioClient:
    """A small client for the Label Studio REST API (the calls judgekit needs).

    ``url``/``token`` default to ``LABEL_STUDIO_URL`` / ``LABEL_STUDIO_API_KEY``. Every failure
    is a :class:`JudgekitError` sentence that names the variable to fix and never contains the
    token or the address.
    """

    def __init__(self, url: str | None = None, token: str | None = None, *, timeout: float = 60) -> None:
        url = (url or os.environ.get(ENV_URL) or "").strip()
        token = (token or os.environ.get(ENV_TOKEN) or "").strip()
        if not url:
            raise JudgekitError(
                f"No Label Studio address: pass --url or set {ENV_URL} (e.g. http://127.0.0.1:8080)."
            )
        if not token:
            raise JudgekitError(
                f"No Label Studio API token: pass --token or set {ENV_TOKEN} (Account & Settings → "
                "Access Token in Label Studio)."
            )
        if not re.match(r"^https?://", url):
            raise JudgekitError(f"The Label Studio address in --url / {ENV_URL} must start with http:// or https://.")
        # An HTTP header carries printable ASCII only; say so without echoing the token.
        if not re.fullmatch(r"[\x21-\x7e]+", token):
            raise JudgekitError(
                f"The Label Studio API token in --token / {ENV_TOKEN} contains spaces or characters "
                "that are not plain ASCII; copy it again from Account & Settings → Access Token."
            )
        try:
            import httpx
        except ImportError:  # pragma: no cover - the labelstudio extra brings httpx
            raise JudgekitError(
                "The Label Studio bridge needs httpx: pip install 'judgekit[labelstudio]'."
            ) from None
        self._httpx = httpx
        try:
            self._http = httpx.Client(
                base_url=url.rstrip("/"),
                headers={"Authorization": f"Token {token}", "Accept": "application/json"},
                timeout=timeout,
            )
        except httpx.InvalidURL:
            raise JudgekitError(
                f"The Label Studio address in --url / {ENV_URL} is not a valid URL (check the host "
                "and the port), e.g. http://127.0.0.1:8080."
            ) from None

    def close(self) -> None:
        self._http.close()

    def __enter__(self) -> LabelStudioClient:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()

    # ------------------------------------------------------------- plumbing
    def request(self, method: str, path: str, **kwargs: Any) -> httpx.Response:
        """One API call; HTTP and connection failures become one :class:`JudgekitError` sentence."""
        httpx = self._httpx
        try:
            resp = self._http.request(method, path, **kwargs)
        except httpx.TimeoutException:
            raise JudgekitError(
                f"The Label Studio server in --url / {ENV_URL} did not answer {method} {path} in "
                "time; check that it is running and not overloaded."
            ) from None
        except httpx.HTTPError as exc:
            raise JudgekitError(
                f"Cannot reach the Label Studio server in --url / {ENV_URL} "
                f"({type(exc).__name__}); start it (bash scripts/labelstudio-server.sh start) or "
                "fix the address."
            ) from None
        if resp.status_code in (401, 403):
            raise JudgekitError(
                f"Label Studio refused the API token ({resp.status_code}); set {ENV_TOKEN} (or "
                "--token) to a valid token from Account & Settings → Access Token (legacy tokens "
                "must be enabled in the organization settings)."
            )
        if resp.status_code >= 400:
            raise JudgekitError(
                f"Label Studio answered {resp.status_code} to {method} {path}: "
                f"{_detail(resp)}."
            )
        return resp

    def json(self, method: str, path: str, **kwargs: Any) -> Any:
        resp = self.request(method, path, **kwargs)
        try:
            return resp.json()
        except ValueError:
            raise JudgekitError(
                f"Label Studio answered {method} {path} with something that is not JSON; is "
                f"{ENV_URL} the address of a Label Studio server?"
            ) from None

    # ----------------------------------------------------------------- API
    def whoami(self) -> dict[str, Any]:
        """The user the token belongs to (also checks address and token)."""
        data: dict[str, Any] = self.json("GET", "/api/current-user/whoami")
        return data

    def projects(self) -> list[dict[str, Any]]:
        out: list[dict[str, Any]] = []
        page = 1
        while True:
            data = self.json("GET", "/api/projects/", params={"page": page, "page_size": 100})
            if isinstance(data, list):
                return data
            out.extend(data.get("results", []))
            if not data.get("next"):
                return out
            page += 1

    def find_project(self, title: str) -> dict[str, Any] | None:
        """The project called ``title``, or ``None``; several of that name is an error."""
        found = [p for p in self.projects() if p.get("title") == title]
        if len(found) > 1:
            ids = ", ".join(str(p["id"]) for p in found)
            raise JudgekitError(
                f"Label Studio has {len(found)} projects named {title!r} (ids {ids}); rename all "
                "but one so judgekit knows which to use."
            )
        return found[0] if found else None

    def project(self, title: str) -> dict[str, Any]:
        """The project called ``title``; a missing project is an error listing the others."""
        found = self.find_project(title)
        if found is None:
            names = sorted(p.get("title", "") for p in self.projects())
            have = ", ".join(repr(n) for n in names[:10]) if names else "none"
            raise JudgekitError(
                f"Label Studio project {title!r} does not exist (projects there: {have}); check "
                "the name or push to it first."
            )
        return found

    def create_project(self, title: str, config: str, description: str) -> dict[str, Any]:
        data: dict[str, Any] = self.json(
            "POST",
            "/api/projects/",
            json={"title": title, "label_config": config, "description": description},
        )
        return data

    def tasks(self, project_id: int, *, with_annotations: bool = True, page_size: int = 100) -> Iterator[dict[str, Any]]:
        """All tasks of a project, page by page (with their annotations unless told not to)."""
        page = 1
        seen = 0
        fields = "all" if with_annotations else "task_only"
        while True:
            data = self.json(
                "GET",
                "/api/tasks/",
                params={"project": project_id, "page": page, "page_size": page_size, "fields": fields},
            )
            tasks = data.get("tasks", []) if isinstance(data, dict) else data
            yield from tasks
            seen += len(tasks)
            total = data.get("total", 0) if isinstance(data, dict) else 0
            if not tasks or seen >= total:
                return
            page += 1

    def import_tasks(self, project_id: int, tasks: list[dict[str, Any]]) -> list[int]:
        """Import task data dicts; returns the new task ids."""
        data = self.json(
            "POST",
            f"/api/projects/{project_id}/import",
            params={"return_task_ids": "true"},
            json=[{"data": t} for t in tasks],
        )
        return list(data.get("task_ids", []))

    def set_overlap(self, task_id: int, annotators: int) -> None:
        """Ask for ``annotators`` distinct annotations of a task (before anyone annotates it)."""
        self.json("PATCH", f"/api/tasks/{task_id}/", json={"overlap": annotators})

    def users(self) -> dict[int, str]:
        """Label Studio user id → stable rater id (email, else username)."""
        data = self.json("GET", "/api/users/")
        rows = data.get("results", []) if isinstance(data, dict) else data
        return {int(u["id"]): rater_name(u) for u in rows if rater_name(u)}


def rater_name(user: Mapping[str, Any]) -> str:
    """A Label Studio user's stable rater id: email, else username."""
    for key in ("email", "username"):
        v = str(user.get(key) or "").strip()
        if v:
            return v
    return ""


def _detail(resp: Any) -> str:
    try:
        body = resp.json()
    except ValueError:
        return "no details"
    if isinstance(body, dict):
        errs = body.get("validation_errors")
        if errs:
            return "; ".join(f"{k}: {' '.join(map(str, v)) if isinstance(v, list) else v}"
                             for k, v in errs.items())[:300]
        return str(body.get("detail") or body)[:300]
    return str(body)[:300]


# -------------------------------------------------------------------- push
@dataclass
class PushSummary:
    """What a push did."""

    project: str
    project_id: int
    created: bool
    rubrics: list[str]
    pushed: int
    already: int
    overlap: int = 0

    def lines(self) -> list[str]:
        how = "created" if self.created else "reused"
        out = [
            f"Label Studio project {self.project!r} (id {self.project_id}, {how}): {self.pushed} new "
            f"tasks, {self.already} already there; rubrics {', '.join(self.rubrics)}."
        ]
        if self.overlap:
            out.append(f"  {self.overlap} tasks ask for at least two annotators.")
        return out


def push(
    client: LabelStudioClient,
    items: pd.DataFrame,
    rubrics: Sequence[Rubric | str],
    project: str,
    *,
    overlap: pd.Series | None = None,
    overlap_annotators: int = 2,
    meta: Sequence[str] | None = None,
    comment: bool = True,
    chunk_size: int = 500,
    seed: int = 0,
) -> PushSummary:
    """Create or reuse ``project`` and import the ``items`` it does not have yet.

    ``overlap`` (bool/int Series indexed by item_id) marks items that need
    ``overlap_annotators`` distinct annotators. Tasks are imported in shuffled order (seeded), in
    chunks of ``chunk_size``, so the queue does not reveal why an item was chosen. A project set
    up with other rubrics (or another edit of them) is an error: push to a new project.
    """
    rubs = _check_rubrics(rubrics)
    if len(project.strip()) < 3:
        raise JudgekitError(f"Project name {project!r} is too short; Label Studio needs 3 characters or more.")
    if chunk_size < 1:
        raise JudgekitError("--chunk-size must be at least 1.")
    data = task_data(items, meta=meta)
    ids = [d["item_id"] for d in data]
    dup = sorted({i for i in ids if ids.count(i) > 1}) if len(set(ids)) != len(ids) else []
    if dup:
        raise JudgekitError(f"Item {dup[0]!r} appears twice in the items to push; item ids must be unique.")
    config = label_config(rubs, comment=comment)
    client.whoami()
    existing = client.find_project(project)
    created = existing is None
    if existing is None:
        existing = client.create_project(
            project,
            config,
            "Created by judgekit. Rate blind: you do not see any judge's or other annotator's "
            f"label.\n{rubric_marker(rubs)}",
        )
    else:
        recorded = parse_marker(existing.get("description"))
        wanted = [r.ref for r in rubs]
        if not recorded:
            raise JudgekitError(
                f"Label Studio project {project!r} was not created by judgekit (no rubric record in "
                "its description); push to a new project name."
            )
        if sorted(recorded) != sorted(wanted):
            raise JudgekitError(
                f"Label Studio project {project!r} rates {', '.join(recorded)}, not "
                f"{', '.join(wanted)}; push these rubrics (or this edit of them) to a new project."
            )
    pid = int(existing["id"])
    have = {
        str(t.get("data", {}).get("item_id"))
        for t in client.tasks(pid, with_annotations=False)
    }
    new = [d for d in data if d["item_id"] not in have]
    random.Random(f"{seed}:{project}").shuffle(new)
    for i in range(0, len(new), chunk_size):
        client.import_tasks(pid, new[i : i + chunk_size])
    # Overlap is set on every wanted task that nobody has annotated yet and that asks for fewer
    # annotators, not only on the tasks imported now: a push interrupted between the import and
    # this step, or items pushed earlier without a sample, get it on the next push.
    n_overlap = 0
    want = {str(k) for k, v in overlap.items() if bool(v)} & set(ids) if overlap is not None else set()
    if want:
        for t in client.tasks(pid, with_annotations=False):
            iid = str(t.get("data", {}).get("item_id"))
            if (
                iid in want
                and not t.get("total_annotations")
                and _num(t.get("overlap") or 1) < overlap_annotators
            ):
                client.set_overlap(int(t["id"]), overlap_annotators)
                n_overlap += 1
    return PushSummary(
        project=project,
        project_id=pid,
        created=created,
        rubrics=[r.ref for r in rubs],
        pushed=len(new),
        already=len(data) - len(new),
        overlap=n_overlap,
    )


# -------------------------------------------------------------------- pull
@dataclass
class PullSummary:
    """What a pull found and wrote."""

    source: str
    ratings: int = 0
    new: int = 0
    changed: int = 0
    unchanged: int = 0
    cancelled: int = 0
    superseded: int = 0
    unrated: int = 0
    items_added: int = 0
    by_rubric: dict[str, dict[str, int]] = field(default_factory=dict)
    notes: list[str] = field(default_factory=list)

    def lines(self) -> list[str]:
        out = [
            f"Pulled {self.ratings} human ratings from {self.source}: {self.new} new, "
            f"{self.changed} revised, {self.unchanged} unchanged."
        ]
        skipped = []
        if self.cancelled:
            skipped.append(f"{self.cancelled} cancelled annotations skipped")
        if self.superseded:
            skipped.append(f"{self.superseded} older annotations replaced by a later one")
        if self.unrated:
            skipped.append(f"{self.unrated} rubric answers left empty")
        if skipped:
            out.append("  " + "; ".join(skipped) + ".")
        for rubric, by_rater in self.by_rubric.items():
            raters = ", ".join(f"{r} {n}" for r, n in by_rater.items())
            out.append(f"  {rubric}: {raters}")
        out.extend(f"  {n}" for n in self.notes)
        return out


@dataclass
class _Annotation:
    task_id: Any
    item_id: str
    annotation_id: Any
    user: Any
    updated: float
    choices: dict[str, Any]  # control name -> list of choices / raw value
    comment: str | None
    cancelled: bool
    data: dict[str, Any]


def _ts(v: Any) -> float:
    if v is None or v == "" or (isinstance(v, float) and v != v):
        return 0.0
    if isinstance(v, int | float):
        return float(v)
    try:
        return datetime.fromisoformat(str(v).replace("Z", "+00:00")).timestamp()
    except ValueError:
        return 0.0


def _from_full_tasks(tasks: Sequence[Mapping[str, Any]], where: str) -> list[_Annotation]:
    out = []
    for n, task in enumerate(tasks, start=1):
        tid = task.get("id", n)

        def bad(what: str, tid: Any = tid) -> JudgekitError:
            return JudgekitError(
                f"{where}: task {tid} is not in Label Studio's JSON export shape ({what}); export "
                "the project again as JSON, JSON_MIN or CSV."
            )

        raw_data = task.get("data") or {}
        if not isinstance(raw_data, dict):
            raise bad("'data' is not an object")
        data = dict(raw_data)
        iid = data.get("item_id")
        # "completions" is what Label Studio before 1.0 called annotations.
        anns = task.get("annotations") or task.get("completions") or []
        if not isinstance(anns, list) or not all(isinstance(a, dict) for a in anns):
            raise bad("'annotations' is not a list of objects")
        for a in anns:
            results = a.get("result") or []
            if not isinstance(results, list) or not all(
                isinstance(r, dict) and isinstance(r.get("value") or {}, dict) for r in results
            ):
                raise bad(f"annotation {a.get('id')}: 'result' is not a list of objects with a 'value'")
            for r in results:
                if "choices" in (r.get("value") or {}) and not isinstance(r["value"]["choices"], list):
                    raise bad(f"annotation {a.get('id')}: 'choices' is not a list")
        if _missing(iid) or str(iid).strip() == "":
            if not anns:
                continue
            raise JudgekitError(
                f"{where}: task {tid} has no item_id in its data, so its labels cannot be matched "
                "to an item; push tasks with judgekit or add item_id to the task data."
            )
        for a in anns:
            choices: dict[str, Any] = {}
            comment = None
            for res in a.get("result") or []:
                value = res.get("value") or {}
                name = res.get("from_name")
                if "choices" in value:
                    choices[name] = value["choices"]
                elif name == COMMENT_CONTROL and "text" in value:
                    text = value["text"]
                    comment = " ".join(map(str, text)) if isinstance(text, list) else str(text)
            user = a.get("completed_by")
            if isinstance(user, dict):
                user = rater_name(user) or user.get("id")
            out.append(
                _Annotation(
                    task_id=tid,
                    item_id=str(iid),
                    annotation_id=a.get("id"),
                    user=user,
                    updated=_ts(a.get("updated_at") or a.get("created_at")),
                    choices=choices,
                    comment=comment,
                    cancelled=bool(a.get("was_cancelled")),
                    data=data,
                )
            )
    return out


_FLAT_FIELDS = {"id", "annotator", "annotation_id", "created_at", "updated_at", "lead_time",
                "item_id", "messages", "response", "prompt", COMMENT_CONTROL, "was_cancelled"}


def _from_flat_rows(rows: Sequence[Mapping[str, Any]], rubrics: Sequence[Rubric], where: str) -> list[_Annotation]:
    names = {r.name for r in rubrics}
    out = []
    for n, row in enumerate(rows, start=1):
        user = row.get("annotator")
        if _missing(user) or str(user).strip() == "":
            continue  # a task nobody annotated
        iid = row.get("item_id")
        if _missing(iid) or str(iid).strip() == "":
            raise JudgekitError(
                f"{where} row {n}: no item_id, so its labels cannot be matched to an item; export "
                "a project pushed by judgekit or add an item_id column."
            )
        choices: dict[str, Any] = {}
        for name in names:
            if name in row and not _missing(row[name]) and str(row[name]).strip() != "":
                v = row[name]
                if isinstance(v, str) and v.strip().startswith("{"):
                    with contextlib.suppress(ValueError, AttributeError):
                        v = json.loads(v).get("choices", v)
                choices[name] = v if isinstance(v, list) else [v]
        comment = row.get(COMMENT_CONTROL)
        data = {k: v for k, v in row.items() if k not in _FLAT_FIELDS and k not in names}
        data["item_id"] = str(iid)
        for k in ("messages", "response", "prompt"):
            if k in row and not _missing(row[k]):
                data[k] = row[k]
        if isinstance(user, float) and user.is_integer():
            user = int(user)
        out.append(
            _Annotation(
                task_id=row.get("id", n),
                item_id=str(iid),
                annotation_id=row.get("annotation_id", n),
                user=user,
                updated=_ts(row.get("updated_at") or row.get("created_at")),
                choices=choices,
                comment=None if _missing(comment) or str(comment).strip() == "" else str(comment),
                cancelled=str(row.get("was_cancelled", "")).lower() in ("true", "1"),
                data=data,
            )
        )
    return out


def read_export(path: str | Path, rubrics: Sequence[Rubric]) -> list[_Annotation]:
    """Annotations from a Label Studio export file: JSON, JSON_MIN (``.json``) or CSV."""
    p = Path(path)
    where = f"Label Studio export {p}"
    if not p.exists():
        raise JudgekitError(f"{where}: no such file; check the path.")
    suffix = p.suffix.lower()
    if suffix == ".csv":
        try:
            df = pd.read_csv(p, dtype={"item_id": str})
        except (pd.errors.ParserError, pd.errors.EmptyDataError, UnicodeDecodeError) as exc:
            raise JudgekitError(f"{where}: cannot read it as CSV ({str(exc).splitlines()[0][:120]}).") from None
        if "annotator" not in df.columns:
            raise JudgekitError(f"{where}: no 'annotator' column; export the project as CSV from Label Studio.")
        rows: list[dict[str, Any]] = [
            {str(k): v for k, v in r.items()}
            for r in df.astype(object).where(df.notna(), None).to_dict("records")
        ]
        return _from_flat_rows(rows, rubrics, where)
    if suffix != ".json":
        raise JudgekitError(f"{where}: use a .json (JSON or JSON_MIN) or .csv export.")
    try:
        data = json.loads(p.read_text(encoding="utf-8"))
    except json.JSONDecodeError as exc:
        raise JudgekitError(f"{where}: invalid JSON at line {exc.lineno}; export it again.") from None
    except UnicodeDecodeError:
        raise JudgekitError(f"{where} is not UTF-8 text; export it again.") from None
    if not isinstance(data, list):
        raise JudgekitError(f"{where}: expected a JSON list of tasks (JSON or JSON_MIN export).")
    if not data:
        return []
    if not all(isinstance(x, dict) for x in data):
        raise JudgekitError(f"{where}: every entry must be a JSON object; export it again.")
    if any("annotations" in x or "completions" in x or "data" in x for x in data):
        return _from_full_tasks(data, where)
    return _from_flat_rows(data, rubrics, where)


def _latest(anns: list[_Annotation]) -> tuple[list[_Annotation], int, int]:
    """Keep each annotator's latest non-cancelled annotation per task."""
    cancelled = sum(a.cancelled for a in anns)
    live = [a for a in anns if not a.cancelled]
    best: dict[tuple[str, str], _Annotation] = {}
    for a in live:
        key = (a.item_id, str(a.user))
        cur = best.get(key)
        if cur is None or (a.updated, _num(a.annotation_id)) > (cur.updated, _num(cur.annotation_id)):
            best[key] = a
    return list(best.values()), cancelled, len(live) - len(best)


def _num(v: Any) -> float:
    try:
        return float(v)
    except (TypeError, ValueError):
        return 0.0


def annotations_to_ratings(
    anns: Sequence[_Annotation],
    rubrics: Sequence[Rubric],
    users: Mapping[Any, str],
    *,
    where: str,
    hashes: Mapping[str, str] | None = None,
    reference: Sequence[str] = (),
) -> tuple[pd.DataFrame, PullSummary]:
    """Annotations → validated human ratings (long format) for every rubric, and a summary.

    ``users`` maps Label Studio user ids to rater ids; an annotator given by email passes through.
    ``reference`` names annotators (rater ids) whose labels are the adjudicated gold label
    (``rater_kind="reference"``). ``hashes`` (rubric id → hash recorded at push) stamps ratings
    with the rubric edit the
    annotators saw.
    """
    summary = PullSummary(source=where)
    pulled_at = time.time()  # for annotations whose export carries no timestamp
    latest, summary.cancelled, summary.superseded = _latest(list(anns))
    frames = []
    for rubric in rubrics:
        rows = []
        for a in latest:
            raw = a.choices.get(rubric.name)
            if raw is None:
                summary.unrated += 1
                continue
            rater = _rater(a.user, users, where)
            if len(raw) != 1:
                raise JudgekitError(
                    f"{where}: task {a.task_id} (item {a.item_id!r}), annotation "
                    f"{a.annotation_id} by {rater}: {len(raw)} choices for {rubric.name}; one is "
                    "expected (the config asks for a single choice)."
                )
            if rubric.normalise(raw[0]) is None:
                raise JudgekitError(
                    f"{where}: task {a.task_id} (item {a.item_id!r}), annotation "
                    f"{a.annotation_id} by {rater}: choice {raw[0]!r} for {rubric.name} is not in "
                    f"rubric {rubric.id} (codes: {rubric.describe_codes()}); fix the project's "
                    "labeling config or add an alias to the rubric."
                )
            rows.append(
                {
                    "item_id": a.item_id,
                    "rater_id": rater,
                    "rater_kind": "reference" if rater in reference else "human",
                    "label": raw[0],
                    "rationale": a.comment,
                    "created_at": a.updated or pulled_at,
                }
            )
        if not rows:
            continue
        long = pd.DataFrame(rows)
        long["created_at"] = long["created_at"].astype(float)
        long["_row"] = range(len(long))
        df = normalise_ratings(long, rubric, source=where, default_kind="human")
        if hashes and rubric.id in hashes:
            df["rubric_hash"] = hashes[rubric.id]
        frames.append(df)
        counts = df["rater_id"].value_counts().sort_index()
        summary.by_rubric[rubric.id] = {str(k): int(v) for k, v in counts.items()}
    if not frames:
        return pd.DataFrame(columns=RATING_COLUMNS), summary
    out = pd.concat(frames, ignore_index=True)
    summary.ratings = len(out)
    return out[RATING_COLUMNS], summary


def _rater(user: Any, users: Mapping[Any, str], where: str) -> str:
    if isinstance(user, str) and "@" in user:
        return user.strip()
    for key in (user, _as_int(user), str(user)):
        if key in users:
            return users[key]
    raise JudgekitError(
        f"{where}: annotator {user!r} is a Label Studio user id judgekit cannot name; give --url and "
        f"--token (or {ENV_URL} / {ENV_TOKEN}) so it can look the user up, or map ids with "
        "--annotator-map '2=alice@example.org,3=bob@example.org'."
    )


def _as_int(v: Any) -> Any:
    try:
        return int(v)
    except (TypeError, ValueError):
        return v


def parse_annotator_map(spec: str | None) -> dict[Any, str]:
    """``"2=alice@x.org,3=bob"`` → {2: "alice@x.org", 3: "bob"}."""
    out: dict[Any, str] = {}
    for part in (spec or "").split(","):
        if not part.strip():
            continue
        uid, sep, name = part.partition("=")
        if not sep or not name.strip():
            raise JudgekitError(
                f"--annotator-map entry {part.strip()!r} must look like 'ID=email'; fix it."
            )
        out[_as_int(uid.strip())] = name.strip()
    return out


def _items_from_annotations(anns: Sequence[_Annotation]) -> pd.DataFrame:
    rows: dict[str, dict[str, Any]] = {}
    for a in anns:
        if a.item_id in rows:
            continue
        rec = {k: v for k, v in a.data.items() if k != "messages"}
        msgs = a.data.get("messages")
        if isinstance(msgs, str):
            try:
                msgs = json.loads(msgs)
            except ValueError:
                msgs = None
        if isinstance(msgs, list) and msgs:
            if len(msgs) == 1 and msgs[0].get("role", "user") == "user":
                rec.setdefault("prompt", msgs[0].get("content"))
            else:
                rec["messages"] = msgs
        rec["item_id"] = a.item_id
        rows[a.item_id] = rec
    return pd.DataFrame(list(rows.values()))


def pull(
    store: Store,
    project: str | None = None,
    *,
    client: LabelStudioClient | None = None,
    rubrics: Sequence[Rubric | str] | None = None,
    from_export: str | Path | None = None,
    annotator_map: Mapping[Any, str] | None = None,
    reference: Sequence[str] = (),
) -> PullSummary:
    """Pull annotations into ``store`` as human ratings (all or nothing).

    Through the API: ``client`` + ``project`` (rubrics read from the project, or checked against
    ``rubrics``). From a file: ``from_export`` + ``rubrics`` (annotator ids resolved through
    ``client`` when given, or ``annotator_map``).
    """
    users: dict[Any, str] = dict(annotator_map or {})
    hashes: dict[str, str] = {}
    if from_export is not None:
        if not rubrics:
            raise JudgekitError("--from-export needs --rubric for each rubric rated in the export.")
        rubs = _check_rubrics(rubrics)
        anns = read_export(from_export, rubs)
        where = f"Label Studio export {Path(from_export).name}"
        needs_lookup = any(
            not (isinstance(a.user, str) and "@" in a.user) and _as_int(a.user) not in users
            and a.user not in users
            for a in anns if not a.cancelled
        )
        if client is not None and needs_lookup:
            users = {**client.users(), **users}
    else:
        if client is None or not project:
            raise JudgekitError("Give --project (and the server) or --from-export FILE to pull.")
        client.whoami()
        proj = client.project(project)
        recorded = parse_marker(proj.get("description"))
        where = f"Label Studio project {project!r}"
        if rubrics:
            rubs = _check_rubrics(rubrics)
            # A rubric the project does not rate would pull nothing (or stamp another version's
            # hash on the labels): say so instead.
            rated = [ref.split("#", 1)[0] for ref in recorded]
            other = [r.id for r in rubs if recorded and r.id not in rated]
            if other:
                raise JudgekitError(
                    f"{where} rates {', '.join(rated)}, not {other[0]}; leave out --rubric (the "
                    "project's own rubrics are used) or name those."
                )
        elif recorded:
            rubs = _check_rubrics([ref.split("#", 1)[0] for ref in recorded])
        else:
            raise JudgekitError(
                f"{where} was not created by judgekit; name the rubrics its choice controls "
                "rate with --rubric (the control names must be the rubric names)."
            )
        for ref in recorded:
            rid, _, h = ref.partition("#")
            if h:
                hashes[rid] = h
        anns = _from_full_tasks(list(client.tasks(int(proj["id"]))), where)
        users = {**client.users(), **users}
    ratings, summary = annotations_to_ratings(
        anns, rubs, users, where=where, hashes=hashes, reference=reference
    )
    missing_ref = sorted(set(reference) - set(ratings["rater_id"]))
    if missing_ref:
        raise JudgekitError(
            f"{where}: --reference {missing_ref[0]!r} rated nothing there; give the adjudicator's "
            "email (or username) as Label Studio knows it."
        )
    for r in rubs:
        if r.id in hashes and hashes[r.id] != r.hash:
            summary.notes.append(
                f"{r.id} has changed since the push (#{hashes[r.id]} → #{r.hash}): these ratings "
                f"are stored under #{hashes[r.id]}, the edit the annotators saw."
            )
    key = ["item_id", "rater_id", "rubric", "rubric_hash", "trial"]
    before = store.ratings(rater_kind=["human", "reference"])
    # Ratings an earlier pull took from this source whose annotation is gone (deleted, or turned
    # into a skip) are not removed, but they must not go unnoticed: they still count.
    earlier = before[(before["source"] == where) & before["rubric"].isin([r.id for r in rubs])]
    if not earlier.empty:
        gone = earlier[key].merge(ratings[key], on=key, how="left", indicator=True)
        n_gone = int((gone["_merge"] == "left_only").sum())
        if n_gone:
            summary.notes.append(
                f"{n_gone} ratings pulled earlier from {where} have no annotation there any more "
                "(deleted or skipped since); they stay in the store and still count."
            )
    if ratings.empty:
        return summary
    merged = ratings.merge(before[[*key, "label", "status"]], on=key, how="left",
                           suffixes=("", "_old"), indicator=True)
    summary.new = int((merged["_merge"] == "left_only").sum())
    both = merged[merged["_merge"] == "both"]
    same = (both["label"].fillna("\0") == both["label_old"].fillna("\0")) & (
        both["status"] == both["status_old"])
    summary.unchanged = int(same.sum())
    summary.changed = int((~same).sum())
    known = set(store.items(ratings["item_id"].unique().tolist())["item_id"])
    new_items = _items_from_annotations([a for a in anns if a.item_id not in known])
    with store.transaction():
        if not new_items.empty:
            summary.items_added = store.put_items(new_items)
        store.put_ratings(ratings)
    return summary


def load_rubrics(names: Sequence[str]) -> list[Rubric]:
    """Load several rubrics by name or path."""
    return _check_rubrics(list(names))
