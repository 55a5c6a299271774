"""An import never replaces a stored item's text: prompt-only items under stored ids with another
prompt are refused as items with responses are; adding the response a prompt-only item lacked
is not a change of text."""

from __future__ import annotations

from pathlib import Path

import pandas as pd
import pytest
from click.testing import CliRunner
from conftest import one_sentence_error
from corpus.base import dump_store

from judgekit.cli import main
from judgekit.errors import JudgekitError
from judgekit.store.database import Store


def _import(tmp_path: Path, name: str, text: str, db: Path) -> object:
    (tmp_path / name).write_text(text)
    return CliRunner().invoke(main, ["import", str(tmp_path / name), "--rubric", "refusal", "--raters", "h1",
                                     "--store", str(db)])


@pytest.mark.parametrize("rows", [3, 300])  # the streamed import and the one in memory
def test_prompt_only_items_with_another_prompt_are_refused(tmp_path: Path, rows: int) -> None:
    db = tmp_path / "s.db"
    first = "item_id,prompt,h1\n" + "".join(f"i{k},prompt {k},full_compliance\n" for k in range(rows))
    assert _import(tmp_path, "a.csv", first, db).exit_code == 0
    before = dump_store(db)
    other = "item_id,prompt,h1\n" + "".join(f"i{k},another prompt {k},full_compliance\n" for k in range(rows))
    one_sentence_error(_import(tmp_path, "b.csv", other, db), "b.csv", "'i0'", "another text")
    assert dump_store(db) == before


def test_put_items_refuses_another_prompt_and_accepts_the_missing_response(tmp_path: Path) -> None:
    with Store(tmp_path / "s.db") as store:
        store.put_items(pd.DataFrame({"item_id": ["a"], "prompt": ["p"]}))
        with pytest.raises(JudgekitError, match="another text"):
            store.put_items(pd.DataFrame({"item_id": ["a"], "prompt": ["q"]}))
        store.put_items(pd.DataFrame({"item_id": ["a"], "prompt": ["p"], "response": ["r"]}))
        got = store.items().set_index("item_id").loc["a"]
        assert (got["prompt"], got["response"]) == ("p", "r")
