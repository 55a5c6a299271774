"""A selective policy's calibration seed is a value numpy's generator takes: a negative or too large
seed is refused in one sentence naming the file, never a traceback during calibration."""

from __future__ import annotations

import pytest
from test_selective import POLICY, _policy_file

from judgekit.errors import JudgekitError
from judgekit.selective.policy import load_selective_policy


@pytest.mark.parametrize("seed", [-1, 2**32])
def test_a_calibration_seed_outside_numpys_range_is_refused(tmp_path, seed):
    text = POLICY.format(alpha=0.1) + f"calibration: {{fraction: 0.5, seed: {seed}}}\n"
    with pytest.raises(JudgekitError, match="seed") as err:
        load_selective_policy(_policy_file(tmp_path, text))
    assert "\n" not in str(err.value) and "Selective policy" in str(err.value)


def test_a_calibration_seed_in_range_is_kept(tmp_path):
    text = POLICY.format(alpha=0.1) + "calibration: {fraction: 0.5, seed: 4294967295}\n"
    assert load_selective_policy(_policy_file(tmp_path, text)).calibration.seed == 2**32 - 1
