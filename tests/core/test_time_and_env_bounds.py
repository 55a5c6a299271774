"""A ``created_at`` of 1e300 seconds was accepted while the year 99999 was
refused; ``JUDGEKIT_LEASE_S=-5`` exited 2 only after creating an empty store file.

Times are bounded the same way whatever their spelling: the years 1 to 9999 (what an ISO 8601
time can name); seconds since 1970 outside them are refused with the same words. Environment
settings are checked before anything is created.
"""

from __future__ import annotations

import datetime as dt
from pathlib import Path

import pytest
from click.testing import CliRunner
from conftest import one_sentence_error

from judgekit.cli import main
from judgekit.core.values import as_timestamp
from judgekit.errors import JudgekitError

#: 9999-12-31T23:59:59Z and 0001-01-01T00:00:00Z in seconds since 1970 (days from 1970 x 86400:
#: 2,932,896 days to 9999-12-31 and 719,162 days back to 0001-01-01)
LAST = 2_932_896 * 86_400 + 86_399
FIRST = -719_162 * 86_400


def test_the_bounds_are_those_of_the_calendar():
    assert dt.datetime(9999, 12, 31, 23, 59, 59, tzinfo=dt.UTC).timestamp() == LAST
    assert dt.datetime(1, 1, 1, tzinfo=dt.UTC).timestamp() == FIRST


@pytest.mark.parametrize("value", [1e300, -1e300, "1e300", LAST + 1, str(FIRST - 1), 10**30,
                                   "99999-01-01T00:00:00Z", "+12345-01-01T00:00:00+00:00"])
def test_a_time_outside_the_years_1_to_9999_is_refused_alike(value):
    with pytest.raises(JudgekitError, match=r"row 1: created_at .* is outside the years 1 to 9999"):
        as_timestamp(value, "f.csv row 1", 0.0)


@pytest.mark.parametrize("value", [LAST, FIRST, 0, 1714000000, "1714000000.5", "9999-12-31T23:59:59Z",
                                   "0001-01-01T00:00:00+00:00"])
def test_times_inside_the_bounds_are_read(value):
    got = as_timestamp(value, "f.csv row 1", 0.0)
    assert FIRST <= got <= LAST


def test_an_import_with_created_at_1e300_is_refused(tmp_path: Path):
    f = tmp_path / "r.csv"
    f.write_text("item_id,rater_id,label,created_at\ni1,h1,full_refusal,1e300\n", encoding="utf-8")
    res = CliRunner().invoke(main, ["import", str(f), "--rubric", "refusal", "--store", str(tmp_path / "s.db")])
    one_sentence_error(res, "line 2: created_at '1e300' is outside the years 1 to 9999")
    assert not (tmp_path / "s.db").exists()


@pytest.mark.parametrize("value", ["-5", "0", "nan", "soon"])
def test_a_bad_lease_setting_creates_no_store(tmp_path: Path, value: str):
    (tmp_path / "items.jsonl").write_text('{"item_id": "p1", "prompt": "p", "response": "I cannot help."}\n',
                                          encoding="utf-8")
    (tmp_path / "panel.yaml").write_text(
        'rubric: refusal\nitems: items.jsonl\njudges:\n  - id: kw\n    model: "rules:refusal-keywords"\n',
        encoding="utf-8")
    store = tmp_path / "new.db"
    res = CliRunner().invoke(main, ["judge", str(tmp_path / "panel.yaml"), "--store", str(store), "--no-progress"],
                             env={"JUDGEKIT_LEASE_S": value})
    one_sentence_error(res, "JUDGEKIT_LEASE_S")
    assert not store.exists() and not Path(str(store) + "-journal").exists()
    assert sorted(p.name for p in tmp_path.iterdir()) == ["items.jsonl", "panel.yaml"]
