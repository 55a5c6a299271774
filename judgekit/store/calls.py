"""Judge calls, provider batches and the runs' leases on them: the only code that reads or writes
the ``calls``, ``judge_batches`` and ``call_leases`` tables (their schema is in the store's
migrations).

A **call** is one answered (or failed) request to a judge, keyed by the hash of (judge spec +
parameters, rubric hash, item hash, trial) — see :func:`judgekit.judges.base.call_key`. It keeps
the raw completion, so a parser change re-parses without a new call, and the usage (tokens, cost,
latency, attempts) exports and reports add up. A **batch** is a set of call keys submitted to a
provider's batch API and not collected yet (``submitted``) or collected. A **lease** is a run's
claim on a pending call key (or on a submitted batch, ``batch:<id>``): concurrent ``judgekit
judge`` runs on one store send a call only when they hold its live lease, so they split the work
instead of sending every call twice (see :func:`claim`).

Rows travel as dataclasses (:class:`CallRow`, :class:`BatchRow`, ...). Writes join a transaction
that is already open (:meth:`judgekit.store.database.Store.transaction`), so a panel commits a call and the
rating made from it together. Functions returning DataFrames import pandas when called.
"""

from __future__ import annotations

import json
import time
from collections.abc import Iterable, Sequence
from dataclasses import fields
from operator import attrgetter
from typing import TYPE_CHECKING, Any

from judgekit.core.redact import redact
from judgekit.store.call_rows import BatchRow as BatchRow
from judgekit.store.call_rows import CallRow as CallRow
from judgekit.store.call_rows import Claim as Claim
from judgekit.store.call_rows import JudgeParameters as JudgeParameters
from judgekit.store.call_rows import JudgeUsage as JudgeUsage
from judgekit.store.call_rows import ParsedAnswer as ParsedAnswer
from judgekit.store.call_rows import StoredAnswer as StoredAnswer
from judgekit.store.database import Store
from judgekit.store.locking import describe_owner, forget_owner, new_owner, owner_gone, owner_name
from judgekit.store.schema import MAX_SQL_VARIABLES

if TYPE_CHECKING:
    import pandas as pd


_CALL_COLUMNS = [f.name for f in fields(CallRow)]
_call_values = attrgetter(*_CALL_COLUMNS)
_INSERT_CALL = (
    f"INSERT OR REPLACE INTO calls ({', '.join(_CALL_COLUMNS)})"
    f" VALUES ({', '.join('?' * len(_CALL_COLUMNS))})"
)


# --------------------------------------------------------------------------- calls
def write_calls(store: Store, rows: Sequence[CallRow]) -> None:
    """Insert calls; a call with the same key replaces the stored one (a retried error)."""
    if not rows:
        return
    with store.transaction() as conn:
        conn.executemany(_INSERT_CALL, [_stored_values(r) for r in rows])


_SPEC = _CALL_COLUMNS.index("spec")


def _stored_values(row: CallRow) -> tuple[Any, ...]:
    """A call's column values, its spec without the credentials of a URL in it
    (:func:`judgekit.core.redact.redact`: a password or token is never stored)."""
    values: tuple[Any, ...] = _call_values(row)
    if "://" in row.spec:
        values = (*values[:_SPEC], redact(row.spec), *values[_SPEC + 1 :])
    return values


def answered(store: Store, keys: Sequence[str], *, raw: bool = False) -> dict[str, StoredAnswer]:
    """The stored calls among ``keys`` that have an answer (``ok`` or ``abstain``; errors are
    asked again), by key. ``raw``: include the raw completions (for a re-parse)."""
    cols = "key, status, label, rationale, error" + (", raw" if raw else "")
    out: dict[str, StoredAnswer] = {}
    for start in range(0, len(keys), MAX_SQL_VARIABLES):
        part = list(keys[start : start + MAX_SQL_VARIABLES])
        rows = store.conn.execute(
            f"SELECT {cols} FROM calls WHERE status != 'error' AND key IN ({','.join('?' * len(part))})",
            part,
        )
        for row in rows:
            out[row[0]] = StoredAnswer(*row)
    return out


def update_parsed(store: Store, answers: Iterable[ParsedAnswer]) -> None:
    """Write new parses (status, label, rationale, error) onto their calls."""
    params = [(a.status, a.label, a.rationale, a.error, a.key) for a in answers]
    with store.transaction() as conn:
        conn.executemany(
            "UPDATE calls SET status = ?, label = ?, rationale = ?, error = ? WHERE key = ?", params
        )


def call_rows(store: Store, *, judges: Sequence[str] | None = None) -> list[CallRow]:
    """Stored calls (of ``judges`` when given), in the order they were first stored."""
    sql = f"SELECT {', '.join(_CALL_COLUMNS)} FROM calls"
    args: list[Any] = []
    if judges:
        sql += f" WHERE judge_id IN ({','.join('?' * len(judges))})"
        args = list(judges)
    out = [CallRow(*row) for row in store.conn.execute(sql + " ORDER BY rowid", args)]
    for row in out:  # a store written before specs were redacted may hold a URL's secret
        row.spec = redact(row.spec)
    return out


def rating_confidences(
    store: Store, judges: Sequence[str], rubric_hash: str
) -> dict[tuple[str, str, int], float]:
    """``{(judge, item id, trial): confidence}`` of the judges' ratings under ``rubric_hash``
    whose call recorded a confidence (a follower item shares its leader's call)."""
    if not judges:
        return {}
    sql = (
        "SELECT r.rater_id, r.item_id, r.trial, c.confidence FROM ratings r JOIN calls c"
        " ON c.key = r.call_key WHERE r.rubric_hash = ? AND c.confidence IS NOT NULL"
        f" AND r.rater_id IN ({','.join('?' * len(judges))})"
    )
    rows = store.conn.execute(sql, [rubric_hash, *judges])
    return {(j, i, int(t)): float(c) for j, i, t, c in rows}


def stored_cost(store: Store, judge_id: str, rubric_hash: str) -> float:
    """USD of every stored call of ``judge_id`` under the rubric hash."""
    row = store.conn.execute(
        "SELECT COALESCE(SUM(cost_usd), 0) FROM calls WHERE judge_id = ? AND rubric_hash = ?",
        (judge_id, rubric_hash),
    ).fetchone()
    return float(row[0])


def usage_by_judge(store: Store, rubric: str, rubric_hash: str) -> list[JudgeUsage]:
    """Calls, tokens and cost per judge under one rubric (``name@version``) and hash, by judge id."""
    rows = store.conn.execute(
        "SELECT judge_id, COUNT(*), COALESCE(SUM(input_tokens), 0), COALESCE(SUM(output_tokens), 0),"
        " COALESCE(SUM(cached_tokens), 0), COALESCE(SUM(cost_usd), 0) FROM calls"
        " WHERE rubric = ? AND rubric_hash = ? GROUP BY judge_id ORDER BY judge_id",
        (rubric, rubric_hash),
    ).fetchall()
    return [JudgeUsage(str(j), int(n), int(i), int(o), int(c), float(usd)) for j, n, i, o, c, usd in rows]


def latest_parameters(
    store: Store, judge_id: str, *, rubric: str | None = None, rubric_hash: str | None = None
) -> JudgeParameters | None:
    """Spec and parameters of the latest call of ``judge_id`` (under ``rubric`` and
    ``rubric_hash`` when given); None when the judge made no call (imported labels)."""
    sql = "SELECT spec, params FROM calls WHERE judge_id = ?"
    args: list[Any] = [judge_id]
    if rubric is not None:
        sql += " AND rubric = ?"
        args.append(rubric)
    if rubric_hash is not None:
        sql += " AND rubric_hash = ?"
        args.append(rubric_hash)
    row = store.conn.execute(sql + " ORDER BY created_at DESC LIMIT 1", args).fetchone()
    if not row:
        return None
    # redacted also when read: an older store may hold a URL's secret, and the identity hash is
    # always the hash of the redacted spec (judgekit.core.redact)
    return JudgeParameters(spec=redact(row[0]), params_json=row[1])


def ratings_not_made_by(store: Store, rubric: Any, judge: str, groups: Sequence[str],
                        identity: tuple[str, dict[str, Any]] | None) -> list[tuple[str, int, str]]:
    """``(item_id, trial, provenance)`` of ``judge``'s ratings under ``rubric`` (perturbed item
    copies left out) that were not made as a verdict recorded them: whose provenance group
    (:data:`judgekit.store.provenance.EFFECTIVE`) is not in ``groups``, or, panel ratings, whose
    call was not made by ``identity`` (spec, params) of that judge under the rating's rubric hash
    or answered another label or status than the rating holds (an edit after the call)."""
    from judgekit.store.provenance import EFFECTIVE, PANEL, rubric_pairs, under
    from judgekit.store.variants import variant_item_sql

    texts: list[str | None] = []
    if identity is not None:
        spec, params = identity
        for (text,) in store.conn.execute("SELECT DISTINCT params FROM calls WHERE judge_id = ? AND spec = ?",
                                          (judge, spec)):
            if dict(json.loads(text or "{}")) == params:
                texts.append(text)
    cond, args = under(rubric_pairs(rubric), "r.")
    vcond, vargs = variant_item_sql("r.item_id")
    eff = EFFECTIVE.format(a="r.")
    made = ("c.key IS NOT NULL AND c.judge_id = r.rater_id AND c.rubric_hash = r.rubric_hash"
            " AND c.status IS r.status AND c.label IS r.label AND c.spec IS ?"
            " AND c.params IN (SELECT value FROM json_each(?))")
    rows = store.conn.execute(
        f"SELECT r.item_id, r.trial, {eff} FROM ratings r LEFT JOIN calls c ON c.key = r.call_key"
        f" WHERE {cond} AND r.rater_id = ? AND {vcond} AND NOT ("
        f"  ({eff} = '{PANEL}' AND ? = 1 AND {made})"
        f"  OR ({eff} != '{PANEL}' AND {eff} IN (SELECT value FROM json_each(?))))"
        " ORDER BY r.rowid",
        [*args, judge, *vargs, int(PANEL in groups and identity is not None),
         identity[0] if identity else None, json.dumps(texts), json.dumps(list(groups))])
    return [(str(i), int(t), str(g)) for i, t, g in rows]


def calls_frame(store: Store, *, judges: Sequence[str] | None = None) -> pd.DataFrame:
    """Every stored call as a DataFrame (columns of :class:`CallRow`), oldest first."""
    from judgekit.store.frames import read_frame

    sql = f"SELECT {', '.join(_CALL_COLUMNS)} FROM calls"
    args: list[Any] = []
    if judges:
        sql += f" WHERE judge_id IN ({','.join('?' * len(judges))})"
        args = list(judges)
    return _redacted(read_frame(store.conn, sql + " ORDER BY created_at", args), "spec")


def usage_frame(store: Store) -> pd.DataFrame:
    """The usage of every call, named for joining with ratings: ``call_key, rater_id, item_id,
    trial, rubric_hash, judge_spec``, tokens, cost, latency, attempts and ``_t`` (created_at)."""
    from judgekit.store.frames import read_frame

    return _redacted(read_frame(
        store.conn,
        "SELECT key AS call_key, judge_id AS rater_id, item_id, trial, rubric_hash, spec AS judge_spec,"
        " input_tokens, output_tokens, cached_tokens, cost_usd, latency_s, attempts, created_at AS _t"
        " FROM calls",
    ), "judge_spec")


def _redacted(frame: pd.DataFrame, column: str) -> pd.DataFrame:
    """``frame`` with the credentials of URLs in ``column`` redacted (a store written before
    specs were redacted may hold them)."""
    if len(frame) and frame[column].astype(str).str.contains("://", regex=False).any():
        frame[column] = frame[column].map(lambda v: redact(v) if isinstance(v, str) else v)
    return frame


# --------------------------------------------------------------------------- batches
def add_batch(store: Store, batch: BatchRow) -> None:
    """Record a submitted provider batch (so a later run collects it instead of resubmitting)."""
    with store.transaction() as conn:
        conn.execute(
            "INSERT INTO judge_batches (batch_id, provider, judge_id, spec, rubric_hash, keys,"
            " status, created_at, updated_at) VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?)",
            (batch.batch_id, batch.provider, batch.judge_id, redact(batch.spec), batch.rubric_hash,
             json.dumps(batch.keys), batch.status, batch.created_at, batch.updated_at),
        )


def open_batches(store: Store, judge_id: str, rubric_hash: str) -> dict[str, set[str]]:
    """The submitted, not yet collected batches of a judge: batch id → its call keys, oldest first."""
    rows = store.conn.execute(
        "SELECT batch_id, keys FROM judge_batches WHERE judge_id = ? AND rubric_hash = ?"
        " AND status = 'submitted' ORDER BY created_at",
        (judge_id, rubric_hash),
    )
    return {bid: set(json.loads(keys)) for bid, keys in rows}


def has_open_batches(store: Store, judge_id: str, rubric_hash: str) -> bool:
    """Whether a judge has a submitted batch that is not collected yet."""
    row = store.conn.execute(
        "SELECT 1 FROM judge_batches WHERE judge_id = ? AND rubric_hash = ? AND status = 'submitted'"
        " LIMIT 1",
        (judge_id, rubric_hash),
    ).fetchone()
    return row is not None


def mark_collected(store: Store, batch_id: str) -> None:
    """Mark a batch collected (its results are written)."""
    with store.transaction() as conn:
        conn.execute(
            "UPDATE judge_batches SET status = 'collected', updated_at = ? WHERE batch_id = ?",
            (time.time(), batch_id),
        )


def batch_rows(store: Store) -> list[BatchRow]:
    """Every recorded batch, in the order submitted."""
    rows = store.conn.execute(
        "SELECT batch_id, provider, judge_id, spec, rubric_hash, keys, status, created_at, updated_at"
        " FROM judge_batches ORDER BY rowid"
    )
    return [
        BatchRow(bid, prov, jid, spec, rh, json.loads(keys), status, created, updated)
        for bid, prov, jid, spec, rh, keys, status, created, updated in rows
    ]


# --------------------------------------------------------------------------- leases
#: How long a claim lasts, in seconds, unless its run renews it (``JUDGEKIT_LEASE_S`` sets it for a
#: run). A run renews all its claims every quarter of this while it is alive, so only the claims
#: of a run that crashed, froze or lost its machine run out, and the next run retries them after
#: at most this long. A crashed run on the same machine (same host and pid namespace) is known
#: to be gone at once — its process no longer exists —, so its claims are free immediately.
LEASE_SECONDS = 120.0


def batch_lease_key(batch_id: str) -> str:
    """The lease key of a submitted batch (held by the run that collects it)."""
    return f"batch:{batch_id}"


def claim(
    store: Store,
    owner: str,
    keys: Sequence[str],
    *,
    seconds: float,
    skip_batched: bool = False,
    now: float | None = None,
) -> Claim:
    """Lease the pending ``keys`` to ``owner`` for ``seconds``, in one ``BEGIN IMMEDIATE``
    transaction: a key is claimed unless it is answered (``ok``/``abstain``) or another run holds
    a live lease on it (one that has not expired, of an owner not known to be gone). A key the
    owner holds already is claimed again (renewed). ``skip_batched``: keys in a submitted
    provider batch (of any judge) are not claimed either."""
    now = time.time() if now is None else now
    out = Claim()
    if not keys:
        return out
    gone: dict[str, bool] = {}
    with store.transaction() as conn:
        batched = _submitted_keys(store) if skip_batched else set()
        for start in range(0, len(keys), MAX_SQL_VARIABLES):
            part = list(keys[start : start + MAX_SQL_VARIABLES])
            marks = ",".join("?" * len(part))
            done = {k for (k,) in conn.execute(
                f"SELECT key FROM calls WHERE status != 'error' AND key IN ({marks})", part)}
            leases = dict(conn.execute(
                f"SELECT key, owner FROM call_leases WHERE expires_at > ? AND key IN ({marks})",
                [now, *part]))
            free = []
            for key in part:
                if key in done:
                    out.answered.append(key)
                    continue
                if key in batched:
                    out.batched.append(key)
                    continue
                other = leases.get(key)
                if other is not None and other != owner:
                    if other not in gone:
                        gone[other] = owner_gone(other)
                    if not gone[other]:
                        out.held[key] = other
                        continue
                free.append(key)
            conn.executemany(
                "INSERT OR REPLACE INTO call_leases (key, owner, expires_at) VALUES (?, ?, ?)",
                [(k, owner, now + seconds) for k in free],
            )
            out.claimed += free
    return out


def _submitted_keys(store: Store) -> set[str]:
    keys: set[str] = set()
    for (blob,) in store.conn.execute("SELECT keys FROM judge_batches WHERE status = 'submitted'"):
        keys.update(json.loads(blob))
    return keys


def live_leases(store: Store, keys: Sequence[str], *, now: float | None = None) -> dict[str, str]:
    """The owner of each of ``keys`` leased now (a lease not expired; its owner may still be
    known to be gone, :func:`owner_gone`), by key; reads only."""
    now = time.time() if now is None else now
    out: dict[str, str] = {}
    for start in range(0, len(keys), MAX_SQL_VARIABLES):
        part = list(keys[start : start + MAX_SQL_VARIABLES])
        out.update(store.conn.execute(
            f"SELECT key, owner FROM call_leases WHERE expires_at > ? AND key IN ({','.join('?' * len(part))})",
            [now, *part]))
    return out


def renew(store: Store, owner: str, *, seconds: float, now: float | None = None) -> int:
    """Extend every lease of ``owner`` to ``seconds`` from now; returns how many it holds."""
    now = time.time() if now is None else now
    with store.transaction() as conn:
        cur = conn.execute("UPDATE call_leases SET expires_at = ? WHERE owner = ?", (now + seconds, owner))
        return cur.rowcount


def release(store: Store, owner: str, keys: Iterable[str]) -> None:
    """End ``owner``'s leases on ``keys`` (joins an open transaction: a writer releases a call's
    lease in the transaction that stores the call)."""
    params = [(k, owner) for k in keys]
    if not params:
        return
    with store.transaction() as conn:
        conn.executemany("DELETE FROM call_leases WHERE key = ? AND owner = ?", params)


def release_all(store: Store, owner: str, *, now: float | None = None) -> None:
    """End every lease of ``owner`` (a run's exit) and drop leases that expired."""
    now = time.time() if now is None else now
    forget_owner(owner)
    with store.transaction() as conn:
        conn.execute("DELETE FROM call_leases WHERE owner = ? OR expires_at <= ?", (owner, now))


__all__ = [
    "LEASE_SECONDS",
    "BatchRow",
    "CallRow",
    "Claim",
    "JudgeParameters",
    "JudgeUsage",
    "ParsedAnswer",
    "StoredAnswer",
    "add_batch",
    "answered",
    "batch_lease_key",
    "batch_rows",
    "call_rows",
    "calls_frame",
    "claim",
    "describe_owner",
    "forget_owner",
    "has_open_batches",
    "latest_parameters",
    "live_leases",
    "mark_collected",
    "new_owner",
    "open_batches",
    "owner_gone",
    "owner_name",
    "ratings_not_made_by",
    "release",
    "release_all",
    "renew",
    "stored_cost",
    "update_parsed",
    "usage_by_judge",
    "usage_frame",
]
