"""Which refusal-pool strings were emitted: per model and slice, how many rated responses a rule
judge matched to each string of the refusal pool (``rules:knowledge-leak``'s ``match`` field,
read by :func:`judgekit.judges.matches.attach_matches`).

For a group G (a model, or a model and a slice value) and a pool string s::

    n(G, s)     = number of ok ratings in G whose match is s (rule refusal_pool)
    n_ok(G)     = number of ok ratings in G
    share(G, s) = n(G, s) / n_ok(G)

A group with ok ratings but no pool match gets one row with no label and no pool string,
n = 0, its n_ok and share 0 (so "0 of 2" is told from "not rated": a group without ok ratings
has no row).

A sample judged several times counts once per trial (each trial is one judge answer).
"""

from __future__ import annotations

import pandas as pd

EMITTED_COLUMNS = ["label", "pool_string", "n", "n_ok", "share"]


def emitted_pool_strings(matches: pd.DataFrame, df: pd.DataFrame, keys: list[str]) -> pd.DataFrame:
    """The table of emitted pool strings per group ``keys`` (columns of ``df``, which has
    ``item_id``). ``matches``: ratings with ``item_id``, ``status``, ``label``, ``match_rule``,
    ``match_string``. Rows sorted by group, then by n (descending) and the string."""
    m = matches.copy()
    m["item_id"] = m["item_id"].astype(str)
    ok = m[m["status"].eq("ok")]
    f = df[list(dict.fromkeys([*keys, "item_id"]))].merge(ok, on="item_id", how="inner")
    out_cols = ["model" if k == "_model" else k for k in keys] + EMITTED_COLUMNS
    if f.empty:
        return pd.DataFrame(columns=out_cols)
    totals = f.groupby(keys, sort=True, dropna=False).size().rename("n_ok").reset_index()
    pool = f[f["match_rule"].eq("refusal_pool")]
    counts = (pool.groupby([*keys, "label", "match_string"], sort=True, dropna=False).size()
              .rename("n").reset_index().merge(totals, on=keys, how="left"))
    # groups with ok answers and no pool match: one row, n = 0 (not left out)
    matched = totals[keys].merge(counts[keys].drop_duplicates(), on=keys, how="left",
                                 indicator=True)["_merge"].eq("both").to_numpy()
    zero = totals[~matched].assign(label=None, match_string=None, n=0)
    counts = pd.concat([counts, zero], ignore_index=True) if len(counts) else zero
    counts["n"] = counts["n"].astype(int)
    counts["n_ok"] = counts["n_ok"].astype(int)
    counts["share"] = counts["n"] / counts["n_ok"]
    counts = counts.rename(columns={"match_string": "pool_string", "_model": "model"})
    order = ["model" if k == "_model" else k for k in keys]
    counts = counts.sort_values([*order, "n", "pool_string"],
                                ascending=[*([True] * len(order)), False, True], kind="stable")
    return counts[out_cols].reset_index(drop=True)


__all__ = ["EMITTED_COLUMNS", "emitted_pool_strings"]
