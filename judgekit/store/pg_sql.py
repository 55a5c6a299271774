"""The store's SQL as PostgreSQL reads it: one translation of the SQLite dialect the store speaks.

judgekit's SQL is written for SQLite (the embedded default). A PostgreSQL store
(:mod:`judgekit.store.postgres`) runs the same statements through :func:`translate`, which rewrites
the few constructs the two dialects spell differently:

* placeholders: ``?`` → ``%s`` and ``?N`` → ``%(pN)s`` (a literal ``%`` doubled);
* ``INSERT OR IGNORE`` → ``ON CONFLICT DO NOTHING``; ``INSERT OR REPLACE`` → ``ON CONFLICT (key)
  DO UPDATE`` of every column, the row taking a new ``rowid`` as SQLite's REPLACE gives it;
* ``a IS NOT b`` / ``a IS b`` (SQLite's null-safe comparisons) → ``IS [NOT] DISTINCT FROM``;
* SQLite's index hints (``NOT INDEXED``, ``INDEXED BY``) dropped;
* ``x [NOT] GLOB ?`` → ``[NOT] judgekit_glob(x, ?)``, ``char(N)`` → ``chr(N)``,
  ``group_concat(x, sep)`` → ``string_agg(x, sep)`` (linear, where an aggregate of
  concatenations would copy the text for every row), ``temp.`` →
  ``pg_temp.``, a subquery in ``FROM`` without an alias is given one;
* DDL: ``REAL`` → ``DOUBLE PRECISION``, ``INTEGER`` → ``BIGINT``, ``TEXT`` compared byte-wise
  (``COLLATE "C"``, SQLite's order), a typeless column typed from its name, and every table a
  ``rowid`` column (a sequence: SQLite's insertion order, which the store orders by).

SQLite's functions the store calls (``json_each``, ``json_type``, ``json_valid``, ``typeof``, ``->``/``->>`` on JSON text, ``sum``/``max`` of a comparison) are created in
the database by :data:`COMPAT_FUNCTIONS`, so the statements keep their SQLite spelling.
"""

from __future__ import annotations

import re
from functools import lru_cache

from judgekit.store.schema import MIGRATIONS


@lru_cache(maxsize=1)
def table_keys() -> dict[str, tuple[str, ...]]:
    """Each table's key, read from the migrations (:data:`~judgekit.store.schema.MIGRATIONS`):
    what ``INSERT OR REPLACE`` replaces on. A table rebuilt under a new name (``ratings_008``)
    counts as the one it replaces."""
    keys: dict[str, tuple[str, ...]] = {"migrations": ("name",)}
    for _, sql in MIGRATIONS:
        code = "".join(text for _, text in _scan(sql))
        for m in re.finditer(r"CREATE TABLE (\w+) \(", code):
            table = re.sub(r"_\d{3}$", "", m.group(1))
            body = _body(code, m.end())
            found = re.search(r"PRIMARY KEY \(([^)]*)\)", body)
            if found:
                keys[table] = tuple(c.strip() for c in found.group(1).split(","))
            else:
                col = re.search(r"(\w+) \w+ PRIMARY KEY", body)
                if col:
                    keys[table] = (col.group(1),)
    return keys


#: the type of a column a temporary table names without one (SQLite takes any value anywhere)
_TYPED_BY_NAME = {
    "value": "DOUBLE PRECISION", "trial": "BIGINT", "created_at": "DOUBLE PRECISION",
    "weight": "DOUBLE PRECISION", "overlap": "BIGINT", "clash": "BIGINT", "meta_id": "BIGINT",
    "id": "BIGINT", "updated_at": "DOUBLE PRECISION", "superseded_at": "DOUBLE PRECISION",
}

_KEYWORDS_AFTER_FROM = {"where", "group", "order", "limit", "join", "left", "inner", "cross",
                        "on", "union", "having", "natural", "right", "full", "offset", "window"}


def _scan(sql: str) -> list[tuple[bool, str]]:
    """``sql`` cut into (is_code, text) pieces: string literals and quoted names are not code."""
    out: list[tuple[bool, str]] = []
    i, start, n = 0, 0, len(sql)
    while i < n:
        c = sql[i]
        if c in "'\"":
            out.append((True, sql[start:i]))
            j = i + 1
            while j < n:
                if sql[j] == c:
                    if j + 1 < n and sql[j + 1] == c:
                        j += 2
                        continue
                    break
                j += 1
            out.append((False, sql[i:j + 1]))
            i = start = j + 1
            continue
        if c == "-" and sql.startswith("--", i):
            out.append((True, sql[start:i]))
            j = sql.find("\n", i)
            j = n if j < 0 else j
            i = start = j
            continue
        i += 1
    out.append((True, sql[start:]))
    return out


def _placeholders(code: str, numbered: list[int]) -> str:
    """``?`` → ``%s``; with numbered ones (``numbered`` non-empty: the largest number so far)
    every placeholder is named, a bare ``?`` taking the next number as SQLite gives it."""
    code = code.replace("%", "%%")

    def one(m: re.Match[str]) -> str:
        if not numbered:
            return "%s"
        k = int(m.group(1)) if m.group(1) else numbered[0] + 1
        numbered[0] = max(numbered[0], k)
        return f"%(p{k})s"

    return re.sub(r"\?(\d+)?", one, code)


_IS_NOT = re.compile(r"\bIS\s+NOT\s+(?!NULL\b|TRUE\b|FALSE\b|DISTINCT\b)", re.I)
_IS = re.compile(r"\bIS\s+(?!NOT\b|NULL\b|TRUE\b|FALSE\b|DISTINCT\b)", re.I)
_GLOB = re.compile(r"([\w.]+)\s+(NOT\s+)?GLOB\s+", re.I)
_GROUP_CONCAT = re.compile(r"\bgroup_concat\(", re.I)  # (always with its separator here)
_CHAR = re.compile(r"\bchar\(", re.I)
_INDEXED = re.compile(r"\s(NOT\s+INDEXED|INDEXED\s+BY\s+\w+)\b", re.I)
_TEMP = re.compile(r"\btemp\.", re.I)


def _code(code: str) -> str:
    code = _IS_NOT.sub("IS DISTINCT FROM ", code)
    code = _IS.sub("IS NOT DISTINCT FROM ", code)
    code = _GLOB.sub(lambda m: f"{m.group(2) or ''}judgekit_glob({m.group(1)}, ", code)
    code = _CHAR.sub("chr(", code)
    code = _GROUP_CONCAT.sub("string_agg(", code)
    code = _INDEXED.sub(" ", code)
    return _TEMP.sub("pg_temp.", code)


def _close_glob(sql: str) -> str:
    """``judgekit_glob(x, %s`` (opened by :func:`_code`) closed after its pattern argument."""
    return re.sub(r"(judgekit_glob\([\w.]+, (?:%s|%\(p\d+\)s))", r"\1)", sql)


def _alias_subqueries(sql: str) -> str:
    """A subquery after FROM or JOIN without an alias is given one (PostgreSQL 15 wants it)."""
    out = sql
    k = 0
    for m in reversed(list(re.finditer(r"\b(FROM|JOIN)\s*\(\s*SELECT\b", sql, re.I))):
        depth, j = 0, m.start() + sql[m.start():].index("(")
        while j < len(sql):
            if sql[j] == "(":
                depth += 1
            elif sql[j] == ")":
                depth -= 1
                if depth == 0:
                    break
            j += 1
        rest = sql[j + 1:].lstrip()
        word = re.match(r"\w+", rest)
        if word is None or word.group(0).lower() in _KEYWORDS_AFTER_FROM:
            k += 1
            out = out[:j + 1] + f" AS _sq{k}" + out[j + 1:]
    return out


def _typed_ddl(sql: str) -> str:
    """``CREATE [TEMP] TABLE``: PostgreSQL's types for SQLite's, and a ``rowid`` column."""
    m = re.match(r"\s*CREATE\s+(TEMP\s+|TEMPORARY\s+)?TABLE\s+(IF\s+NOT\s+EXISTS\s+)?([\w.]+)\s*\(",
                 sql, re.I)
    if not m:
        return sql
    body = sql[m.end():sql.rstrip().rstrip(";").rstrip().rfind(")")]
    cols = []
    for part in _split_columns(body):
        name = part.split()[0] if part.split() else ""
        if len(part.split()) == 1 and re.fullmatch(r"\w+", name):  # a typeless column
            part = f"{name} {_TYPED_BY_NAME.get(name, 'TEXT')}"
        cols.append(part)
    body = ", ".join(cols)
    body = re.sub(r"\bREAL\b", "DOUBLE PRECISION", body, flags=re.I)
    body = re.sub(r"\bINTEGER\b", "BIGINT", body, flags=re.I)
    body = re.sub(r"\bTEXT\b", 'TEXT COLLATE "C"', body, flags=re.I)
    if not re.search(r"\browid\b", body):
        body += ", rowid BIGSERIAL"
    return sql[:m.end()] + body + ")"


def _typed_column(sql: str) -> str:
    """``ALTER TABLE t ADD COLUMN c TYPE``: PostgreSQL's type for SQLite's."""
    if not re.match(r"\s*ALTER\s+TABLE\s+\w+\s+ADD\s+COLUMN\b", sql, re.I):
        return sql
    sql = re.sub(r"\bREAL\b", "DOUBLE PRECISION", sql, flags=re.I)
    sql = re.sub(r"\bINTEGER\b", "BIGINT", sql, flags=re.I)
    return re.sub(r"\bTEXT\b", 'TEXT COLLATE "C"', sql, flags=re.I)


def _body(code: str, start: int) -> str:
    """What stands between the ``(`` just before ``start`` and its ``)``."""
    depth = 1
    for j in range(start, len(code)):
        depth += {"(": 1, ")": -1}.get(code[j], 0)
        if depth == 0:
            return code[start:j]
    return code[start:]


def _split_columns(body: str) -> list[str]:
    parts, depth, cur = [], 0, ""
    for ch in body:
        if ch == "(":
            depth += 1
        elif ch == ")":
            depth -= 1
        if ch == "," and depth == 0:
            parts.append(cur.strip())
            cur = ""
        else:
            cur += ch
    if cur.strip():
        parts.append(cur.strip())
    return parts


def _conflict(sql: str, columns_of: dict[str, tuple[str, ...]]) -> str:
    m = re.match(r"\s*INSERT\s+OR\s+(REPLACE|IGNORE)\s+INTO\s+([\w.]+)", sql, re.I)
    if not m:
        return sql
    table = m.group(2)
    sql = sql[:m.start()] + f"INSERT INTO {table}" + sql[m.end():]
    body = sql.rstrip().rstrip(";")
    if m.group(1).upper() == "IGNORE":
        return body + " ON CONFLICT DO NOTHING"
    key = table_keys()[table]
    cols = [c for c in columns_of[table] if c not in key]
    sets = ", ".join(f"{c} = EXCLUDED.{c}" for c in cols)
    return body + f" ON CONFLICT ({', '.join(key)}) DO UPDATE SET {sets}"


@lru_cache(maxsize=512)
def _translate(sql: str, columns_key: tuple[tuple[str, tuple[str, ...]], ...]) -> tuple[str, bool]:
    sql = "".join(text for _, text in _scan(sql)).strip()  # without its comments
    sql = _typed_ddl(_typed_column(sql))
    scanned = _scan(sql)
    numbered = [0] if any(is_code and re.search(r"\?\d", text) for is_code, text in scanned) else []
    pieces = [_placeholders(_code(text), numbered) if is_code else text.replace("%", "%%")
              for is_code, text in scanned]
    out = _close_glob("".join(pieces))
    out = _alias_subqueries(out)
    out = _conflict(out, dict(columns_key))
    return out, bool(numbered)


def translate(sql: str, columns_of: dict[str, tuple[str, ...]]) -> tuple[str, bool]:
    """``sql`` (SQLite's dialect) as PostgreSQL reads it, and whether its placeholders are
    numbered (``?1``: the arguments go as ``{"p1": ...}``). ``columns_of``: each table's columns
    (for ``INSERT OR REPLACE``)."""
    return _translate(sql, tuple(sorted(columns_of.items())))


#: SQLite's functions the store's SQL calls, created in a PostgreSQL store (idempotent)
COMPAT_FUNCTIONS = r"""
CREATE OR REPLACE FUNCTION judgekit_json_at(t text, path text) RETURNS jsonb
LANGUAGE sql IMMUTABLE AS $$
  SELECT CASE WHEN path = '$' THEN t::jsonb
              ELSE t::jsonb -> (CASE WHEN path LIKE '$."%"' THEN substr(path, 4, length(path) - 4)
                                     ELSE substr(path, 3) END) END $$;
CREATE OR REPLACE FUNCTION json_type(t text, path text) RETURNS text
LANGUAGE sql IMMUTABLE AS $$
  SELECT CASE jsonb_typeof(v) WHEN 'string' THEN 'text' WHEN 'boolean' THEN v #>> '{}'
    WHEN 'number' THEN CASE WHEN v::text ~ '^-?[0-9]+$' THEN 'integer' ELSE 'real' END
    ELSE jsonb_typeof(v) END FROM (SELECT judgekit_json_at(t, path) AS v) s $$;
CREATE OR REPLACE FUNCTION json_type(t text) RETURNS text
LANGUAGE sql IMMUTABLE AS $$ SELECT json_type(t, '$') $$;
CREATE OR REPLACE FUNCTION json_valid(t text) RETURNS boolean
LANGUAGE plpgsql IMMUTABLE AS $$
BEGIN PERFORM t::jsonb; RETURN t IS NOT NULL; EXCEPTION WHEN others THEN RETURN false; END $$;
CREATE OR REPLACE FUNCTION judgekit_json_arrow(t text, path text) RETURNS text
LANGUAGE sql IMMUTABLE AS $$ SELECT judgekit_json_at(t, path)::text $$;
CREATE OR REPLACE FUNCTION judgekit_json_arrow2(t text, path text) RETURNS text
LANGUAGE sql IMMUTABLE AS $$ SELECT judgekit_json_at(t, path) #>> '{}' $$;
DO $$ BEGIN
  CREATE OPERATOR -> (LEFTARG = text, RIGHTARG = text, FUNCTION = judgekit_json_arrow);
EXCEPTION WHEN duplicate_function THEN NULL; END $$;
DO $$ BEGIN
  CREATE OPERATOR ->> (LEFTARG = text, RIGHTARG = text, FUNCTION = judgekit_json_arrow2);
EXCEPTION WHEN duplicate_function THEN NULL; END $$;
CREATE OR REPLACE FUNCTION json_each(t text) RETURNS TABLE(key text, value text)
LANGUAGE plpgsql IMMUTABLE AS $$
BEGIN
  IF jsonb_typeof(t::jsonb) = 'array' THEN
    RETURN QUERY SELECT (e.n - 1)::text, e.v #>> '{}' FROM jsonb_array_elements(t::jsonb)
      WITH ORDINALITY AS e(v, n);
  ELSIF jsonb_typeof(t::jsonb) = 'object' THEN
    RETURN QUERY SELECT o.key, o.value #>> '{}' FROM jsonb_each(t::jsonb) AS o;
  END IF;
END $$;
CREATE OR REPLACE FUNCTION typeof(x text) RETURNS text LANGUAGE sql IMMUTABLE AS
  $$ SELECT CASE WHEN x IS NULL THEN 'null' ELSE 'text' END $$;
CREATE OR REPLACE FUNCTION typeof(x bigint) RETURNS text LANGUAGE sql IMMUTABLE AS
  $$ SELECT CASE WHEN x IS NULL THEN 'null' ELSE 'integer' END $$;
CREATE OR REPLACE FUNCTION typeof(x double precision) RETURNS text LANGUAGE sql IMMUTABLE AS
  $$ SELECT CASE WHEN x IS NULL THEN 'null' ELSE 'real' END $$;
CREATE OR REPLACE FUNCTION judgekit_glob(x text, pattern text) RETURNS boolean
LANGUAGE sql IMMUTABLE AS $$
  SELECT x ~ ('^' || replace(replace(regexp_replace(pattern, '([.+^$(){}|\[\]\\])', '\\\1', 'g'),
                                     '*', '.*'), '?', '.') || '$') $$;
CREATE OR REPLACE FUNCTION chr(n bigint) RETURNS text LANGUAGE sql IMMUTABLE AS
  $$ SELECT chr(n::integer) $$;
CREATE OR REPLACE FUNCTION judgekit_sum_bool(acc bigint, x boolean) RETURNS bigint
LANGUAGE sql IMMUTABLE AS $$ SELECT acc + CASE WHEN x THEN 1 ELSE 0 END $$;
CREATE OR REPLACE AGGREGATE sum(boolean) (SFUNC = judgekit_sum_bool, STYPE = bigint, INITCOND = '0');
CREATE OR REPLACE AGGREGATE max(boolean) (SFUNC = boolor_statefunc, STYPE = boolean);
"""
