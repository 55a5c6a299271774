"""Read Inspect AI evaluation logs: the model outputs as items, the scorers' grades as judge ratings.

Researchers who graded a model with a model-graded scorer in `Inspect AI
<https://inspect.aisi.org.uk/>`_ can check that grader against human labels: each scorer of the
log becomes a judge rater. Both log formats are read with the standard library only:

* ``.json`` — one ``EvalLog`` object: ``{"version", "status", "eval": {...}, ..., "samples": [...]}``;
* ``.eval`` — a zip archive: ``header.json`` (the log without samples; ``_journal/start.json`` in
  a run that did not finish) and one ``samples/<id>_epoch_<epoch>.json`` per sample.

The fields used (``inspect_ai/log/_log.py``, ``inspect_ai/scorer/_metric.py``,
``inspect_ai/model/_model_output.py``, ``inspect_ai/model/_chat_message.py``):

* ``eval.task``, ``eval.model`` (``EvalSpec``), ``status``;
* per sample (``EvalSample``): ``id`` (int or str), ``epoch`` (from 1), ``input`` (a string or a
  list of chat messages ``{role, content}``, content a string or a list of parts of which the
  ``{"type": "text", "text": ...}`` ones are text), ``output.completion`` (falling back to the
  first choice's message), ``metadata`` (dict), ``scores`` (``{scorer name: Score}``) and
  ``attachments`` (``attachment://<hash>`` references);
* per score (``Score``): ``value`` (str, number, bool, list or ``{key: scalar}``) and
  ``explanation``.

Newer Inspect versions can write ``.eval`` entries compressed with Zstandard (zip method 93),
which Python's ``zipfile`` reads only from Python 3.14; judgekit decompresses them itself with
the ``zstandard`` package.

A log is untrusted input: an ``.eval`` entry that inflates to more than
:data:`_MAX_ENTRY_BYTES` (256 MiB), or entries adding up to more than :data:`MAX_TOTAL_BYTES`
(2 GiB), are refused before they fill the memory (a zip bomb), as are corrupt compressed data,
JSON nested too deeply, and fields of the wrong type (``epochs: "3"``, ``scores`` as a list, a
chat input of plain strings): each is one sentence naming the log, the sample and the key.
"""

from __future__ import annotations

import io
import json
import re
import struct
import zipfile
import zlib
from collections.abc import Iterable
from pathlib import Path
from typing import Any

import pandas as pd

from judgekit.core.values import surrogate_problem
from judgekit.errors import JudgekitError
from judgekit.store.schema import is_missing

_ATTACHMENT = "attachment://"
# columns the reader fills itself; a sample metadata key with one of these names gets a prefix
_RESERVED = frozenset({
    "item_id", "prompt", "messages", "response", "content_hash", "model", "task", "sample",
    "rater_id", "rater_kind", "label", "value", "trial", "status", "rationale", "rubric",
    "rubric_hash", "created_at", "source",
})
_HEAD_BYTES = 65536
#: the most one ``.eval`` entry (a sample's JSON) may inflate to
_MAX_ENTRY_BYTES = 256 * 1024 * 1024
#: the most all entries of one ``.eval`` log together may inflate to
MAX_TOTAL_BYTES = 2 * 1024 * 1024 * 1024


def looks_like_inspect_json(path: str | Path) -> bool:
    """Whether a ``.json`` file is an Inspect log rather than a table (a JSON list of rows).

    Reads only the head of the file: Inspect writes the log's fields in a fixed order, with
    ``version``, ``status`` and the ``eval`` spec before the (large) ``samples``.
    """
    try:
        with open(path, "rb") as fh:
            head = fh.read(_HEAD_BYTES).decode("utf-8", errors="replace")
    except OSError:
        return False
    return head.lstrip().startswith("{") and re.search(r'"eval"\s*:\s*\{', head) is not None


def read_inspect_log(path: str | Path) -> tuple[pd.DataFrame, pd.DataFrame]:
    """Items and scores of an Inspect log (``.json`` or ``.eval``).

    Returns ``(items, scores)``:

    * ``items`` — ``item_id`` (the sample id, or ``<id>#<epoch>`` when the log has several
      epochs), ``prompt`` (text input) or ``messages`` (chat input), ``response`` (the output
      completion), and metadata: ``model``, ``task``, ``sample`` (the epoch) and the sample's
      ``metadata`` keys (nested dicts flattened as ``outer.inner``; a key named like one of these
      columns is stored as ``metadata.<key>``);
    * ``scores`` — long ratings ``item_id, rater_id, rater_kind="judge", label, status,
      rationale``: one rater per scorer, or per ``scorer/key`` when a score's value is a dict.
      A missing or NaN value (Inspect's "unscored") is an abstention carrying the explanation.

    Labels are raw values here; :func:`judgekit.store.data.normalise_ratings` maps them to a rubric.

    >>> items, scores = read_inspect_log("logs/2025-01-01T00-00-00_refusal_abc.eval")  # doctest: +SKIP
    """
    p = Path(path)
    if not p.exists():
        raise JudgekitError(f"{p}: no such file; check the path.")
    if p.is_dir():
        raise JudgekitError(f"{p} is a folder; give one Inspect log file (.eval or .json).")
    if p.stat().st_size == 0:
        raise JudgekitError(f"{p} is empty; give an Inspect log file (.eval or .json).")
    try:
        if zipfile.is_zipfile(p):
            header, samples = _read_eval_zip(p)
        elif p.suffix.lower() == ".eval":
            raise JudgekitError(
                f"{p} is not a zip archive, so not an Inspect .eval log; give the .eval or .json "
                "file Inspect wrote in its log folder."
            )
        else:
            header, samples = _read_json_log(p)
        return _frames(p, header, samples)
    except RecursionError:
        raise JudgekitError(
            f"{p}: its JSON is nested too deeply for judgekit to read; give a log written by Inspect."
        ) from None


# ------------------------------------------------------------------ file formats
def _read_json_log(p: Path) -> tuple[dict[str, Any], list[Any]]:
    try:
        text = p.read_text(encoding="utf-8")
        data = json.loads(text)  # too deep: RecursionError, answered by read_inspect_log
    except UnicodeDecodeError:
        raise JudgekitError(f"{p} is not UTF-8 text, so not an Inspect .json log.") from None
    except json.JSONDecodeError as exc:
        raise JudgekitError(f"{p}: invalid JSON at line {exc.lineno}; fix that line.") from None
    problem = surrogate_problem(data, text)
    if problem is not None:
        raise JudgekitError(f"{p}: {problem}.")
    if not isinstance(data, dict) or not isinstance(data.get("eval"), dict):
        raise JudgekitError(
            f"{p} is not an Inspect log (its top level has no 'eval' spec); give a log written "
            "by Inspect, or import a table of ratings with --format json."
        )
    samples = data.get("samples")
    if not samples:
        raise JudgekitError(_no_samples(p, data))
    if not isinstance(samples, list):
        raise JudgekitError(f"{p}: 'samples' is not a list; give a log written by Inspect.")
    return data, samples


def _read_eval_zip(p: Path) -> tuple[dict[str, Any], list[Any]]:
    budget = [MAX_TOTAL_BYTES]
    try:
        with zipfile.ZipFile(p) as zf:
            names = zf.namelist()
            header: dict[str, Any] | None = None
            for name in ("header.json", "_journal/start.json", "start.json"):
                if name in names:
                    header = _zip_json(zf, name, p, budget)
                    break
            if not isinstance(header, dict) or not isinstance(header.get("eval"), dict):
                raise JudgekitError(
                    f"{p} is a zip archive but not an Inspect .eval log (no header.json with an "
                    "'eval' spec); give the .eval file Inspect wrote."
                )
            sample_names = [
                n for n in names
                if n.startswith("samples/") and n.endswith(".json") and n.count("/") == 1
            ]
            if not sample_names:
                raise JudgekitError(_no_samples(p, header))
            declared = sum(zf.getinfo(n).file_size for n in sample_names)
            if declared > budget[0]:
                raise JudgekitError(
                    f"{p}: its samples inflate to {declared // 2**20} MiB, more than the "
                    f"{MAX_TOTAL_BYTES // 2**20} MiB judgekit reads from one log; check the log (a "
                    "zip bomb?) or split the evaluation into smaller logs."
                )
            samples = [_zip_json(zf, n, p, budget) for n in sample_names]
    except zipfile.BadZipFile as exc:
        raise JudgekitError(f"{p}: broken zip archive ({exc}); copy the log again.") from None
    return header, samples


def _zip_json(zf: zipfile.ZipFile, name: str, p: Path, budget: list[int]) -> Any:
    """One entry's JSON, inflated at most to :data:`_MAX_ENTRY_BYTES` (and to what is left of
    ``budget``, the log's :data:`MAX_TOTAL_BYTES`): a declared or actual size beyond is refused
    before it is read into memory."""
    info = zf.getinfo(name)
    limit = min(_MAX_ENTRY_BYTES, budget[0])
    if info.file_size > limit:
        raise JudgekitError(_too_big(p, name, limit))
    try:
        with zf.open(info) as fh:  # zipfile inflates at most the declared size (then checks the CRC)
            raw = fh.read(limit + 1)
    except NotImplementedError:  # a compression method this Python's zipfile cannot decompress
        if info.compress_type != _ZIP_ZSTANDARD:
            raise JudgekitError(
                f"{p}: its entries are compressed with zip method {info.compress_type}, which "
                f"judgekit cannot read; convert it with `inspect log dump {p} > "
                f"{p.with_suffix('.json').name}` and import that .json file."
            ) from None
        raw = _read_zstd_entry(p, info, info.file_size)
    except (zipfile.BadZipFile, zlib.error, EOFError, OSError, ValueError) as exc:
        raise JudgekitError(
            f"{p}: entry {name} is corrupt ({_short(exc)}); copy the log again."
        ) from None
    except Exception as exc:  # zstd patched into zipfile by inspect_ai once imported: read it as without
        if info.compress_type != _ZIP_ZSTANDARD or type(exc).__module__.partition(".")[0] != "zstandard":
            raise
        raw = _read_zstd_entry(p, info, info.file_size)
    if len(raw) > limit:
        raise JudgekitError(_too_big(p, name, limit))
    budget[0] -= len(raw)
    try:
        data = json.loads(raw)
    except (UnicodeDecodeError, json.JSONDecodeError):
        raise JudgekitError(f"{p}: entry {name} is not valid JSON; copy the log again.") from None
    except RecursionError:
        raise JudgekitError(
            f"{p}: entry {name} nests its JSON too deeply for judgekit to read; give a log written "
            "by Inspect."
        ) from None
    problem = surrogate_problem(data, raw)
    if problem is not None:
        raise JudgekitError(f"{p}: entry {name}: {problem}.")
    return data


def _too_big(p: Path, name: str, limit: int) -> str:
    what = ("one entry" if limit == _MAX_ENTRY_BYTES else "the entries of one log together")
    return (
        f"{p}: entry {name} inflates to more than {limit // 2**20} MiB, more than judgekit reads "
        f"from {what}; check the log (a zip bomb?) or split the evaluation into smaller logs."
    )


def _short(exc: BaseException) -> str:
    text = str(exc).strip().splitlines()[0][:120] if str(exc).strip() else ""
    return text or type(exc).__name__


_ZIP_ZSTANDARD = 93


def _read_zstd_entry(p: Path, info: zipfile.ZipInfo, limit: int) -> bytes:
    """One Zstandard-compressed (zip method 93) entry, as newer Inspect versions write them;
    Python's zipfile reads these only from 3.14, so the entry's bytes are located through its
    local file header and decompressed with the ``zstandard`` package, at most ``limit`` (the
    declared size) + 1 bytes: more fails the checksum before it fills the memory."""
    import zstandard

    with p.open("rb") as fh:
        fh.seek(info.header_offset)
        local = fh.read(30)
        if len(local) < 30 or local[:4] != b"PK\x03\x04":
            raise JudgekitError(f"{p}: broken zip entry {info.filename}; copy the log again.")
        name_len, extra_len = struct.unpack("<HH", local[26:30])
        fh.seek(info.header_offset + 30 + name_len + extra_len)
        compressed = fh.read(info.compress_size)
    try:
        chunks: list[bytes] = []
        size = 0
        with zstandard.ZstdDecompressor().stream_reader(io.BytesIO(compressed)) as reader:
            while size <= limit:
                chunk = reader.read(min(1 << 20, limit + 1 - size))
                if not chunk:
                    break
                chunks.append(chunk)
                size += len(chunk)
        raw = b"".join(chunks)
    except zstandard.ZstdError:
        raise JudgekitError(
            f"{p}: entry {info.filename} is not valid Zstandard data; copy the log again."
        ) from None
    if len(raw) != info.file_size or zlib.crc32(raw) != info.CRC:
        raise JudgekitError(f"{p}: entry {info.filename} fails its checksum; copy the log again.")
    return raw


def _no_samples(p: Path, header: dict[str, Any]) -> str:
    status = header.get("status")
    state = f" (run status {status!r})" if status else ""
    return (
        f"{p} has no samples{state}: the run failed before logging any, or ran without sample "
        "logging; re-run the evaluation with samples logged (Inspect's default) and import that log."
    )


# ------------------------------------------------------------------ frames
def _frames(p: Path, header: dict[str, Any], samples: list[Any]) -> tuple[pd.DataFrame, pd.DataFrame]:
    from judgekit.core.values import as_id

    model, task, config_epochs = _eval_spec(p, header["eval"])
    parsed: list[tuple[str, int, dict[str, Any]]] = []
    for i, s in enumerate(samples, start=1):
        if not isinstance(s, dict) or s.get("id") is None:
            raise JudgekitError(f"{p}: sample {i} has no 'id'; give a log written by Inspect.")
        sid = as_id(s["id"], "id", f"{p}: sample {i}")
        epoch = s.get("epoch", 1)
        if not isinstance(epoch, int) or isinstance(epoch, bool):
            raise JudgekitError(f"{p}: sample {s['id']!r} has epoch {epoch!r}, not a number.")
        parsed.append((sid, epoch, s))
    parsed.sort(key=lambda t: (_id_key(t[0]), t[1]))
    several = config_epochs > 1 or any(e != 1 for _, e, _ in parsed)
    seen: set[str] = set()
    item_rows: list[dict[str, Any]] = []
    score_rows: list[dict[str, Any]] = []
    for sid, epoch, s in parsed:
        item_id = f"{sid}#{epoch}" if several else sid
        where = f"{p}: sample {sid!r}" + (f" epoch {epoch}" if several else "")
        if item_id in seen:
            raise JudgekitError(f"{p}: sample {sid!r} epoch {epoch} appears twice; give one log.")
        seen.add(item_id)
        attachments = _mapping(s, "attachments", where)
        metadata = _mapping(s, "metadata", where)
        scores = _mapping(s, "scores", where)
        row: dict[str, Any] = {"item_id": item_id}
        inp = s.get("input")
        if isinstance(inp, list):
            row["messages"] = [_message(m, k, attachments, where) for k, m in enumerate(inp)]
        elif isinstance(inp, str) or inp is None:
            row["prompt"] = None if inp is None else _resolve(inp, attachments)
        else:
            raise JudgekitError(
                f"{where}: 'input' is {_kind(inp)}, not text or a list of chat messages; give a "
                "log written by Inspect."
            )
        row["response"] = _completion(s.get("output"), attachments)
        row["model"] = model
        row["task"] = task
        row["sample"] = epoch
        for key, val in _flatten(metadata):
            name = f"metadata.{key}" if key in _RESERVED else key
            if name in row:
                raise JudgekitError(
                    f"{where}: metadata key {key!r} is given twice (once nested, once with a dot "
                    "in its name); rename one."
                )
            row[name] = val
        item_rows.append(row)
        for scorer, score in scores.items():
            score_rows.extend(_score_rows(item_id, str(scorer), score, where))
    items = pd.DataFrame(item_rows)
    if "prompt" not in items.columns and "messages" not in items.columns:
        items["prompt"] = None
    if not score_rows:
        raise JudgekitError(
            f"{p} has samples but no scores; score the log in Inspect (e.g. `inspect score {p}`) "
            "and import the scored log."
        )
    scores_df = pd.DataFrame(
        score_rows, columns=["item_id", "rater_id", "rater_kind", "label", "status", "rationale"]
    )
    return items, scores_df


def _eval_spec(p: Path, spec: dict[str, Any]) -> tuple[str | None, str | None, int]:
    """``(model, task, epochs)`` of the log's ``eval`` header, checked as Inspect writes them."""
    model, task = spec.get("model"), spec.get("task")
    for key, val in (("model", model), ("task", task)):
        if val is not None and not isinstance(val, str):
            raise JudgekitError(f"{p}: eval.{key} is {_kind(val)}, not text; give a log written by Inspect.")
    config = spec.get("config")
    if config is None:
        config = {}
    if not isinstance(config, dict):
        raise JudgekitError(f"{p}: eval.config is {_kind(config)}, not a mapping; give a log written by Inspect.")
    config_epochs = config.get("epochs")
    if config_epochs is None:
        config_epochs = 1
    if not isinstance(config_epochs, int) or isinstance(config_epochs, bool) or config_epochs < 1:
        raise JudgekitError(
            f"{p}: eval.config.epochs is {config_epochs!r}, not a whole number of epochs (1, 2, …); "
            "give a log written by Inspect."
        )
    return model, task, config_epochs


def _kind(value: Any) -> str:
    if isinstance(value, dict):
        return "a mapping"
    if isinstance(value, list):
        return "a list"
    text = repr(value)
    return text if len(text) <= 40 else text[:39] + "…"


def _mapping(sample: dict[str, Any], key: str, where: str) -> dict[str, Any]:
    """A sample's ``attachments``/``metadata``/``scores``: a mapping (missing or null = empty)."""
    value = sample.get(key)
    if value is None:
        return {}
    if not isinstance(value, dict):
        raise JudgekitError(
            f"{where}: '{key}' is {_kind(value)}, not a mapping of names to values; give a log "
            "written by Inspect."
        )
    return value


def _message(m: Any, k: int, attachments: dict[str, Any], where: str) -> dict[str, str]:
    """One chat message of a sample's input, ``{role, content}`` with content as text."""
    if not isinstance(m, dict):
        raise JudgekitError(
            f"{where}: input[{k}] is {_kind(m)}, not a chat message {{role, content}}; give a log "
            "written by Inspect."
        )
    role = m.get("role")  # Inspect always writes one: a missing role is refused, never guessed
    content = m.get("content")
    if not isinstance(role, str) or not role or not isinstance(content, str | list):
        raise JudgekitError(
            f"{where}: input[{k}] needs 'role' as text and 'content' as text or a list of content "
            "parts; give a log written by Inspect."
        )
    return {"role": role, "content": _text(content, attachments)}


def _id_key(sid: str) -> tuple[int, str]:
    # numeric ids sort as numbers (1, 2, 10), like Inspect's own sample order
    return (0, sid.zfill(20)) if sid.isdigit() else (1, sid)


def _score_rows(item_id: str, scorer: str, score: Any, where: str) -> Iterable[dict[str, Any]]:
    if not isinstance(score, dict):
        score = {"value": score}
    explanation = score.get("explanation")
    if explanation is not None and not isinstance(explanation, str):
        raise JudgekitError(
            f"{where}: the explanation of score {scorer!r} is {_kind(explanation)}, not text; give "
            "a log written by Inspect."
        )
    value = score.get("value")
    parts = (
        [(f"{scorer}/{k}", v) for k, v in value.items()] if isinstance(value, dict)
        else [(scorer, value)]
    )
    for rater, v in parts:
        unscored = is_missing(v)
        if isinstance(v, list):  # a list value has no single label: kept as text, then abstained
            v = json.dumps(v)
        yield {
            "item_id": item_id,
            "rater_id": rater,
            "rater_kind": "judge",
            "label": None if unscored else v,
            "status": "abstain" if unscored else "ok",
            "rationale": (f"unscored: {explanation}" if explanation else "unscored")
            if unscored else explanation,
        }


def _resolve(text: str, attachments: dict[str, Any]) -> str:
    if text.startswith(_ATTACHMENT):
        return str(attachments.get(text[len(_ATTACHMENT):], text))
    return text


def _text(content: Any, attachments: dict[str, Any]) -> str:
    """A message's text: the string, or its text parts joined by newlines (as Inspect's ``.text``)."""
    if isinstance(content, str):
        return _resolve(content, attachments)
    if isinstance(content, list):
        return "\n".join(
            _resolve(str(part.get("text", "")), attachments)
            for part in content
            if isinstance(part, dict) and part.get("type") == "text"
        )
    return ""


def _completion(output: Any, attachments: dict[str, Any]) -> str | None:
    if not isinstance(output, dict):
        return None
    completion = output.get("completion")
    if isinstance(completion, str) and completion:
        return _resolve(completion, attachments)
    choices = output.get("choices") or []
    if choices and isinstance(choices[0], dict) and isinstance(choices[0].get("message"), dict):
        return _text(choices[0]["message"].get("content"), attachments)
    return None


def _flatten(meta: dict[str, Any], prefix: str = "") -> Iterable[tuple[str, Any]]:
    for key, val in meta.items():
        name = f"{prefix}{key}"
        if isinstance(val, dict):
            yield from _flatten(val, f"{name}.")
        elif isinstance(val, list):
            yield name, json.dumps(val, ensure_ascii=False)
        else:
            yield name, val
