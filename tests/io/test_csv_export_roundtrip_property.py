"""Any text survives ``judgekit export items --out items.csv`` and reading it back as a panel's
items (``read_items`` and the panel's same-text check against the store): texts drawn from the
characters that make CSV and spreadsheets misbehave — formula starts, quotes already before them,
separators, line ends, tabs, non-breaking and wide characters."""

from __future__ import annotations

import pandas as pd
from click.testing import CliRunner
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from judgekit.cli import main
from judgekit.io.tables import read_items
from judgekit.store.database import Store

STARTS = "=+-@'\t\r \"0"
NASTY = STARTS + "\n,;|!*#%éü中\u00a0\u2028()[]{}\\/x1.e"
TEXTS = st.tuples(st.text(STARTS, max_size=4), st.text(NASTY, max_size=12)).map(lambda t: t[0] + t[1] + "z")


@settings(max_examples=30, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(responses=st.lists(TEXTS, min_size=1, max_size=6), prompts=st.lists(TEXTS, min_size=6, max_size=6))
def test_any_text_exported_to_csv_reads_back_as_the_same_panel_items(tmp_path_factory, responses, prompts) -> None:
    folder = tmp_path_factory.mktemp("rt")
    ids = [f"i{k}" for k in range(len(responses))]
    with Store(folder / "s.db") as store:
        store.put_items(pd.DataFrame({"item_id": ids, "prompt": prompts[:len(ids)], "response": responses}))
    out = folder / "items.csv"
    done = CliRunner().invoke(main, ["export", "items", "--out", str(out), "--store", str(folder / "s.db")])
    assert done.exit_code == 0, done.output
    table = read_items(out)
    assert list(table.column("response")) == responses
    assert list(table.column("prompt")) == prompts[:len(ids)]
    with Store(folder / "s.db") as store:
        store.check_item_texts(table, source=str(out))  # what a panel with `items: items.csv` checks
