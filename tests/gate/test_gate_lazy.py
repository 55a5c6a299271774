"""`judgekit gate` with the shipped XSTest policy loads no pandas (nor scipy, scikit-learn or a
provider SDK): its figures come from the code matrix (judgekit.agreement.rating_codes) through the
agreement report's one path, its slices from text metadata read by SQL
(judgekit.agreement.slicing.slice_positions_from_groups), its hashes from that matrix
(judgekit.verdict.hashes).
A fresh interpreter, since the test process holds every module already."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

from conftest import copy_store

REPO = Path(__file__).resolve().parents[2]
PROBE = """
import json, sys
from judgekit.cli import main
try:
    main(sys.argv[1:], prog_name="judgekit")
except SystemExit as exc:
    code = exc.code
mods = sorted({m.split(".")[0] for m in sys.modules} & {"pandas", "numpy", "scipy", "sklearn", "openai",
                                                        "anthropic", "pyarrow"})
print("PROBE " + json.dumps({"code": code, "mods": mods}), file=sys.stderr)
"""


def test_the_xstest_gate_loads_no_pandas(tmp_path, xstest_store):
    db = copy_store(xstest_store, tmp_path / "x.db")
    policy = REPO / "annotations" / "xstest-v2" / "policy.yaml"
    env = dict(os.environ, PYTHONPATH=os.pathsep.join([str(REPO), *filter(None, [os.environ.get("PYTHONPATH")])]))
    res = subprocess.run([sys.executable, "-c", PROBE, "gate", str(policy), "--store", db, "--out", str(tmp_path / "g")],
                         cwd=tmp_path, capture_output=True, text=True, timeout=120, env=env)
    got = json.loads(res.stderr.strip().splitlines()[-1].removeprefix("PROBE "))
    assert got["code"] == 1, res.stdout  # both shipped judges fail the shipped policy
    assert got["mods"] == ["numpy"], got
    verdict = json.loads((tmp_path / "g" / "verdict.json").read_text())
    assert verdict["state"] == "fail" and len(verdict["judges"]) == 2
    assert sum(c["name"].startswith("per_slice[") for c in verdict["judges"][0]["checks"]) == 7
