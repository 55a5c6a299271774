"""``judgekit export items --out items.csv`` read back (a panel's ``items: items.csv``, an
import) gives every text exactly as stored: the quote written before a cell a spreadsheet would
run as a formula is taken off again on reading."""

from __future__ import annotations

from pathlib import Path

import pandas as pd
from click.testing import CliRunner

from judgekit.cli import main
from judgekit.io.tables import read_items
from judgekit.store.database import Store

RESPONSES = ["- a markdown list\n- second", "+ plus first", "=1+1", "@mention", "'- already quoted",
             "''=two quotes", "-0.5", "plain text", "'quoted plain"]


def test_exported_items_read_back_exactly_and_match_the_store(tmp_path: Path) -> None:
    db = tmp_path / "s.db"
    ids = [f"i{k}" for k in range(len(RESPONSES))]
    with Store(db) as store:
        store.put_items(pd.DataFrame({"item_id": ids, "prompt": ["p"] * len(ids), "response": RESPONSES}))
    out = tmp_path / "items.csv"
    done = CliRunner().invoke(main, ["export", "items", "--out", str(out), "--store", str(db)])
    assert done.exit_code == 0, done.output
    assert "'- a markdown list" in out.read_text()  # still safe to open in a spreadsheet
    table = read_items(out)
    assert dict(zip(table.ids, table.column("response"), strict=True)) == dict(zip(ids, RESPONSES, strict=True))
    with Store(db) as store:
        store.check_item_texts(table, source=str(out))  # the panel's check: the same texts
