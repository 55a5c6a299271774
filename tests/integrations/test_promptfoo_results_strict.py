"""A promptfoo results file is untrusted input: a malformed one is refused in one sentence, never
a traceback (without promptfoo itself: the importer reads the JSON alone)."""

from __future__ import annotations

import pytest

from judgekit.errors import JudgekitError
from judgekit.integrations.promptfoo_results import result_rows


@pytest.mark.parametrize(("results", "phrase"), [
    ([], "Not a promptfoo results file"),
    ({"results": {"results": [1]}}, "Result 0"),
    ({"results": {"results": [{"gradingResult": {"componentResults": [
        {"metadata": {"judgekit": {"status": "ok", "label": "full_compliance"}}}]}}]}}, "names no judge"),
])
def test_a_malformed_results_file_is_one_sentence(results, phrase: str) -> None:
    with pytest.raises(JudgekitError, match=phrase) as err:
        result_rows(results)
    assert "\n" not in str(err.value)
