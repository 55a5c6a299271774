"""``created_at`` in the last second judgekit reads, 9999-12-31T23:59:59.999999Z, is inside the
years 1 to 9999: it imports and exports again (a float of its seconds rounds up to year 10000,
which no time can be made from)."""

from __future__ import annotations

import datetime as dt
from pathlib import Path

import pytest
from click.testing import CliRunner

from judgekit.cli import main
from judgekit.core.values import as_timestamp


def test_the_last_microsecond_of_year_9999_is_read_and_exported(tmp_path: Path) -> None:
    src = tmp_path / "r.csv"
    src.write_text("item_id,prompt,response,label,rater_id,rater_kind,created_at\n"
                   "a,p,r,full_refusal,h,human,9999-12-31T23:59:59.999999Z\n")
    res = CliRunner().invoke(main, ["import", str(src), "--rubric", "refusal", "--store", str(tmp_path / "s.db")])
    assert res.exit_code == 0, res.output
    res = CliRunner().invoke(main, ["export", "ratings", "--out", str(tmp_path / "o.csv"),
                                    "--store", str(tmp_path / "s.db")])
    assert res.exit_code == 0, res.output
    assert ",9999-12-31T23:59:59.99" in (tmp_path / "o.csv").read_text()  # (a float holds ~3e-5 s here)


@pytest.mark.parametrize("text", ["9999-12-31T23:59:59.999999Z", "9999-12-31T23:59:59.5+00:00",
                                  "0001-01-01T00:00:00Z"])
def test_a_time_inside_the_years_gives_seconds_a_time_can_be_made_from(text: str) -> None:
    seconds = as_timestamp(text, "x", 0.0)
    when = dt.datetime.fromtimestamp(seconds, dt.UTC)
    assert 1 <= when.year <= 9999


@pytest.mark.parametrize("text", ["9999-12-31T23:59:59-01:00", "0001-01-01T00:00:00+01:00"])
def test_a_time_past_the_years_once_in_utc_is_refused(text: str) -> None:
    from judgekit.errors import JudgekitError

    with pytest.raises(JudgekitError, match="outside the years 1 to 9999"):
        as_timestamp(text, "x", 0.0)
