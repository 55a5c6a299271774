"""A query's rows as a DataFrame, on either backend (pandas reads only a :mod:`sqlite3` connection
or SQLAlchemy without a warning; a PostgreSQL store's connection is neither)."""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

import pandas as pd


def read_frame(conn: Any, sql: str, args: Sequence[Any] = ()) -> pd.DataFrame:
    """The rows of ``sql`` (the store's dialect) as a DataFrame named by the query's columns."""
    cur = conn.execute(sql, list(args))
    columns = [d[0] for d in cur.description]
    return pd.DataFrame.from_records(cur.fetchall(), columns=columns, coerce_float=True)


__all__ = ["read_frame"]
