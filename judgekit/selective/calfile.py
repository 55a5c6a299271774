"""The calibration file ``escalate calibrate`` writes and ``escalate apply`` reads: written whole
or not at all; read strictly (it is a user's file by then) and checked against the policy it is
applied with, so thresholds are never applied to another cascade, rubric, reference or target."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any, Literal

from pydantic import Field, ValidationError

from judgekit.core.atomic import write_text_atomic
from judgekit.core.config import ConfigModel, first_error
from judgekit.core.values import loads_json_strict
from judgekit.errors import JudgekitError
from judgekit.selective.calibrate import FORMAT, SelectiveCalibration, policy_hash
from judgekit.selective.policy import SelectivePolicy

#: the largest calibration file read (it holds a few curves: tens of KB)
_MAX_BYTES = 5_000_000


class _Stage(ConfigModel):
    model_config = ConfigModel.model_config | {"extra": "ignore"}
    judge: str
    threshold: float | None = Field(ge=0.0, le=1.0)


class CalibrationFile(ConfigModel):
    """What ``escalate apply`` needs from a calibration file (other keys are for people)."""

    model_config = ConfigModel.model_config | {"extra": "ignore"}
    format: Literal["judgekit.selective.calibration/1"]
    rubric: str
    reference: str
    policy_hash: str
    alpha: float
    delta: float
    rule: str
    stages: list[_Stage] = Field(min_length=1)
    coverage: float
    guarantee: list[str]

    def thresholds(self) -> list[float | None]:
        return [s.threshold for s in self.stages]


def write_calibration(path: str | Path, cal: SelectiveCalibration) -> Path:
    """Write ``cal`` as JSON (atomically: the old file or the new one, never half)."""
    text = json.dumps(cal.to_dict(), indent=1, allow_nan=False)
    return write_text_atomic(path, text + "\n")


def read_calibration(path: str | Path, policy: SelectivePolicy) -> CalibrationFile:
    """Read a calibration file and check it belongs to ``policy``; any problem is one sentence
    naming the file."""
    p = Path(path)
    try:
        with p.open("rb") as fh:
            raw = fh.read(_MAX_BYTES + 1)
    except OSError as exc:
        raise JudgekitError(f"Calibration file {p}: cannot read it ({exc.strerror or exc}).") from None
    if len(raw) > _MAX_BYTES:
        raise JudgekitError(f"Calibration file {p}: larger than {_MAX_BYTES} bytes; is it the file "
                            "`judgekit escalate calibrate` wrote?")
    try:
        data: Any = loads_json_strict(raw)
    except (ValueError, RecursionError) as exc:
        raise JudgekitError(f"Calibration file {p}: not valid JSON ({str(exc)[:120]}); write it "
                            "again with `judgekit escalate calibrate`.") from None
    if not isinstance(data, dict) or data.get("format") != FORMAT:
        raise JudgekitError(f"Calibration file {p}: not a judgekit calibration (its format must be "
                            f"{FORMAT!r}); write it with `judgekit escalate calibrate`.")
    try:
        cal = CalibrationFile(**data)
    except ValidationError as exc:
        raise JudgekitError(f"Calibration file {p}: {first_error(exc)}.") from None
    mismatch = [
        (key, mine, theirs)
        for key, mine, theirs in (
            ("rubric", cal.rubric, policy.rubric),
            ("reference", cal.reference, policy.reference),
            ("alpha", cal.alpha, policy.alpha),
            ("delta", cal.delta, policy.delta),
            ("rule", cal.rule, policy.rule),
            ("cascade", [s.judge for s in cal.stages], policy.judges()),
            ("policy hash (confidence sources, calibration split or min_kept)", cal.policy_hash,
             policy_hash(policy)),
        )
        if mine != theirs
    ]
    if mismatch:
        key, mine, theirs = mismatch[0]
        raise JudgekitError(f"Calibration file {p}: its {key} is {mine!r} but the policy's is "
                            f"{theirs!r}; calibrate again with this policy.")
    return cal


__all__ = ["CalibrationFile", "read_calibration", "write_calibration"]
