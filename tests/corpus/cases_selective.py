"""Selective judging: calibration files a collaborator hands over (``escalate apply``), edited to
a threshold or a hash changed, and selective policies whose confidence or
reference is not anchored to people (``escalate calibrate``).

A calibration file is the one ``escalate calibrate`` wrote on the template store (cascade ``j1``,
which agrees with the reference ``final`` on all 12 items), then edited: a threshold changed, a
hash forged, a key dropped. Each is refused in one sentence naming the file; the store unchanged.
"""

from __future__ import annotations

import json
import shutil
import tempfile
from collections.abc import Callable
from pathlib import Path
from typing import Any

from corpus.base import Case, Valid, text

#: a policy the template store calibrates (12 labelled items, j1 right on all of them)
POLICY = ("rubric: refusal\nreference: final\nalpha: 0.5\ndelta: 0.5\nmin_kept: 1\n"
          "cascade:\n  - judge: j1\n    confidence: {source: constant, value: 1.0}\n")
APPLY = ("escalate", "apply", "{case}/policy.yaml", "{case}/calibration.json", "--store", "{store}")
CALIBRATE = ("escalate", "calibrate", "{case}/policy.yaml", "--out", "{out}/calibration.json",
             "--store", "{store}")

_MADE: dict[str, dict[str, Any]] = {}


def _calibrated(template: Path) -> dict[str, Any]:
    """The calibration ``escalate calibrate`` writes for :data:`POLICY` on (a copy of) the
    template store, made once per template."""
    key = str(template)
    if key not in _MADE:
        from click.testing import CliRunner

        from judgekit.cli import main

        with tempfile.TemporaryDirectory() as tmp:
            shutil.copy(template / "store.db", Path(tmp) / "store.db")
            (Path(tmp) / "policy.yaml").write_text(POLICY, encoding="utf-8")
            out = Path(tmp) / "calibration.json"
            res = CliRunner().invoke(main, ["escalate", "calibrate", str(Path(tmp) / "policy.yaml"),
                                            "--out", str(out), "--store", str(Path(tmp) / "store.db")])
            if res.exit_code != 0:
                raise RuntimeError(f"corpus calibration: {res.output}")
            _MADE[key] = json.loads(out.read_text(encoding="utf-8"))
    return json.loads(json.dumps(_MADE[key]))


def _rehash(cal: dict[str, Any]) -> None:
    """Forge the file's own hash to match an edit (anyone can: it is a plain digest)."""
    from judgekit.core.hashing import digest

    cal["file_hash"] = digest({k: v for k, v in cal.items() if k != "file_hash"})


def calibration_from(edit: Callable[[dict[str, Any]], Any]) -> Callable[[Path], bytes]:
    def make(template: Path) -> bytes:
        cal = _calibrated(template)
        edit(cal)
        return text(json.dumps(cal, indent=1))

    return make


def _edit(cal: dict[str, Any], rehash: bool = False) -> None:
    """Another threshold than the calibration chose (the template's is 0.0: any edit is a forgery)."""
    cal["stages"][0]["threshold"] = 0.25
    if rehash:
        _rehash(cal)


def _forge(key: str) -> Callable[[dict[str, Any]], None]:
    def edit(cal: dict[str, Any]) -> None:
        cal[key] = "0" * 16
        _rehash(cal)

    return edit


def calibration(cid: str, content: Any, expect: tuple) -> Case:
    return Case(id=f"calibration-{cid}", kind="calibration",
                files={"calibration.json": content, "policy.yaml": text(POLICY)}, args=APPLY,
                expect=("Calibration file", *expect))


def selective_policy(cid: str, cascade: str, expect: tuple) -> Case:
    content = POLICY.split("cascade:")[0] + "cascade:\n" + cascade
    return Case(id=f"selective-policy-{cid}", kind="selective-policy", files={"policy.yaml": text(content)},
                args=CALIBRATE, expect=("Selective policy", *expect), no_output=("{out}/calibration.json",))


CASES: list[Case] = [
    calibration("threshold-edited", calibration_from(_edit), ("edited after",)),
    calibration("threshold-edited-hash-forged", calibration_from(lambda c: _edit(c, rehash=True)),
                ("stage 0 (j1) has threshold 0.25",)),
    calibration("items-hash-forged", calibration_from(_forge("items_hash")), ("items with human labels",)),
    calibration("human-ratings-hash-forged", calibration_from(_forge("human_ratings_hash")),
                ("the human labels",)),
    calibration("file-hash-dropped", calibration_from(lambda c: c.pop("file_hash")), ("file_hash",)),
    calibration("store-hashes-dropped", calibration_from(lambda c: (c.pop("items_hash"), _rehash(c))),
                ("items_hash",)),
    calibration("guarantee-edited", calibration_from(lambda c: c.update(guarantee=["always right"])),
                ("edited after",)),
    calibration("guarantee-edited-hash-forged",
                calibration_from(lambda c: (c.update(guarantee=["always right"]), _rehash(c))),
                ("its guarantee is not the one",)),
    calibration("file-hash-number", calibration_from(lambda c: c.update(file_hash=5)), ("file_hash",)),
    calibration("not-json", text("{\"format\": "), ("not valid JSON",)),
    calibration("not-a-calibration", text("[1, 2]"), ("format",)),
    selective_policy("panel-reads-reference", "  - judge: j1\n    confidence: {source: panel, with: [final]}\n",
                     ("reads its confidence from the reference",)),
    selective_policy("panel-reads-human", "  - judge: j1\n    confidence: {source: panel, with: [h1]}\n",
                     ("'h1', which is a human rater",)),
    selective_policy("cascade-judge-human", "  - judge: h2\n    confidence: {source: trials}\n",
                     ("'h2' is a human rater",)),
    selective_policy("panel-reads-consensus",
                     "  - judge: j1\n    confidence: {source: panel, with: [consensus]}\n",
                     ("the human raters' majority",)),
    selective_policy("own-panel", "  - judge: j1\n    confidence: {source: panel, with: [j1]}\n",
                     ("names itself in its panel",)),
]

VALID: list[Valid] = [
    Valid("calibration-apply", {"calibration.json": calibration_from(lambda c: None),
                                "policy.yaml": text(POLICY)}, APPLY),
    Valid("selective-policy-calibrate", {"policy.yaml": text(POLICY)}, CALIBRATE),
]
