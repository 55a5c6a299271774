"""Fixtures for the report tests: a hand-written agreement report and verdict with planted
markup, a store with the shipped XSTest labels, and a real headless Chromium.

Use with ``pytest_plugins = ["tests.report_fixtures"]``. Every fixture name starts with ``report_``
(a plugin's fixtures are visible to the whole session; this keeps them out of other areas' way).
"""

from __future__ import annotations

import os
import shutil
import struct
import subprocess
import zlib
from pathlib import Path
from types import SimpleNamespace
from typing import Any

import pytest

REPO = Path(__file__).resolve().parent.parent
XSTEST_LABELS = REPO / "annotations" / "xstest-v2" / "xstest_v2_labels.csv"
XSTEST_POLICY = REPO / "annotations" / "xstest-v2" / "policy.yaml"

#: planted in model text, slice keys, ids and check details: must render as text, never run.
PLANTED_SCRIPT = "<script>document.title='pwned'</script>"
PLANTED = f"Sure! {PLANTED_SCRIPT}</table></td></tr><img src=x onerror=\"document.title='img'\"> a|b"
HOSTILE_KEY = f'</table>{PLANTED_SCRIPT}"q'
HOSTILE_ITEM = "m1:<b>&\"'7"
LABELS = ["full_compliance", "partial_refusal", "full_refusal"]


def fig(value: float | None, low: float | None, high: float | None, n: int, undefined: str | None = None) -> dict:
    return {"value": value, "low": low, "high": high, "n": n, "undefined": undefined}


def _judge(kappa: dict, matrix: list[list[int]], *, n_items: int, n_abstain: int, dist: dict[str, float]) -> dict:
    n_rated = n_items - n_abstain
    support = {lab: sum(row) for lab, row in zip(LABELS, matrix, strict=True)}
    return {
        "n_items": n_items, "n_rated": n_rated, "n_abstain": n_abstain, "n_error": 0,
        "abstain_rate": n_abstain / n_items, "error_rate": 0.0,
        "vs_reference": {
            "n": kappa["n"], "percent_agreement": fig(0.9, 0.85, 0.94, kappa["n"]), "kappa": kappa,
            "weighted_kappa": None, "alpha": fig(0.79, 0.7, 0.86, kappa["n"]), "ac1": fig(0.85, 0.8, 0.9, kappa["n"]),
            "confusion": {"labels": LABELS, "matrix": matrix, "precision": {lab: 0.8 for lab in LABELS},
                          "recall": {lab: 0.7 for lab in LABELS}, "f1": {lab: 0.75 for lab in LABELS},
                          "support": support},
        },
        "vs_humans": {"annotation_1": {"n": n_rated, "kappa": fig(0.7, 0.6, 0.8, n_rated),
                                       "percent_agreement": fig(0.88, 0.8, 0.93, n_rated)}},
        "alpha_humans": fig(0.9, 0.85, 0.94, n_rated), "alpha_with_judge": fig(0.85, 0.8, 0.9, n_rated),
        "alpha_delta": -0.05, "label_distribution": dist,
    }


def make_agreement() -> dict[str, Any]:
    """An agreement report in the shape of ``agreement_report(...).to_dict()``, written by hand."""
    def one_slice(by: str | None, key: str, n: int) -> dict:
        return {
            "by": by, "key": key, "n_items": n, "n_reference": n,
            "human_ceiling": {"n": n, "raters": ["annotation_1", "annotation_2"],
                              "percent_agreement": fig(0.95, 0.9, 0.98, n), "kappa": fig(0.9, 0.85, 0.95, n),
                              "alpha": fig(0.9, 0.85, 0.95, n), "ac1": fig(0.93, 0.9, 0.96, n)},
            "human_label_distribution": {"full_compliance": 0.5, "partial_refusal": 0.12, "full_refusal": 0.38},
            "reference_label_distribution": {"full_compliance": 0.55, "partial_refusal": 0.12, "full_refusal": 0.33},
            "judges": {
                "gpt4": _judge(fig(0.8, 0.72, 0.87, n - 2), [[50, 2, 3], [4, 6, 2], [1, 0, 30]], n_items=n,
                               n_abstain=2, dist={"full_compliance": 0.56, "partial_refusal": 0.08, "full_refusal": 0.36}),
                "string_match": _judge(fig(0.55, 0.45, 0.64, n), [[40, 0, 15], [5, 0, 7], [2, 0, 31]], n_items=n,
                                       n_abstain=0, dist={"full_compliance": 0.47, "partial_refusal": 0.0,
                                                          "full_refusal": 0.53}),
            },
        }

    slices = [one_slice(None, "all", 100), one_slice("model", "m1", 60), one_slice("model", HOSTILE_KEY, 40)]
    # an undefined figure in one slice: every rater used one category there
    slices[2]["judges"]["string_match"]["vs_reference"]["kappa"] = fig(None, None, None, 40, "every rater used one category")
    return {
        "rubric": "refusal@1", "rubric_hash": "ae2d92b9446d", "level": "nominal", "labels": LABELS,
        "reference": {"rater": "final", "kind": "adjudicated"}, "humans": ["annotation_1", "annotation_2"],
        "judges": ["gpt4", "string_match"], "by": ["model"], "confidence": 0.95, "n_resamples": 1000,
        "slices": slices, "warnings": [f"3 items have no {HOSTILE_KEY!r} value."],
    }


def make_verdict() -> dict[str, Any]:
    """A verdict in the shape ``judgekit gate`` writes: gpt4 passes, string_match fails one check."""
    return {
        "judgekit_version": "0.1.0", "created_at": "2026-11-30T10:00:00+00:00",
        "policy": {"rubric": "refusal", "checks": {"metric": "kappa", "min_lower_bound": 0.6}},
        "policy_hash": "p0l1cyh4sh", "rubric": "refusal@1", "rubric_hash": "ae2d92b9446d", "reference": "final",
        "items_hash": "i7", "human_ratings_hash": "h8", "passed": False,
        "judges": [
            {"judge": "gpt4", "judge_hash": "g1", "passed": True, "checks": [
                {"name": "min_kappa_lower_bound", "rule": "ci>=", "passed": True, "figure": 0.72, "threshold": 0.6, "n": 98,
                 "detail": "lower end of the 95% CI"},
                {"name": "max_abstention_rate", "rule": "ci<=", "passed": True, "figure": 0.02, "threshold": 0.05, "n": 100,
                 "detail": "2 of 100 items abstained"}]},
            {"judge": "string_match", "judge_hash": "s1", "passed": False, "checks": [
                {"name": "min_kappa_lower_bound", "rule": "ci>=", "passed": False, "figure": 0.45, "threshold": 0.6, "n": 100,
                 "detail": f"lower end {PLANTED_SCRIPT}"}]},
        ],
    }


def make_extras() -> dict[str, Any]:
    return {
        "costs": {"gpt4": {"calls": 100, "input_tokens": 51234, "output_tokens": 2345, "cost_usd": 0.4321}},
        "disagreements": [
            {"item_id": "m1:7", "reference": "full_refusal", "judge_id": "string_match",
             "judge_label": "full_compliance", "response_excerpt": PLANTED, "rationale": PLANTED},
            {"item_id": HOSTILE_ITEM, "reference": "full_compliance", "judge_id": "gpt4",
             "judge_label": "full_refusal", "response_excerpt": "I can't help with that.",
             "humans": {"annotation_1": "full_compliance"}},
        ],
    }


@pytest.fixture()
def report_agreement() -> dict[str, Any]:
    return make_agreement()


@pytest.fixture()
def report_verdict() -> dict[str, Any]:
    return make_verdict()


@pytest.fixture()
def report_extras() -> dict[str, Any]:
    return make_extras()


@pytest.fixture()
def report_planted() -> SimpleNamespace:
    """The planted strings (as a fixture, so test modules need not import this plugin)."""
    return SimpleNamespace(script=PLANTED_SCRIPT, text=PLANTED, key=HOSTILE_KEY, item=HOSTILE_ITEM)


# ----------------------------------------------------------------------------- XSTest store
@pytest.fixture(scope="session")
def report_xstest_store(tmp_path_factory) -> Path:
    """Path of a store holding the shipped XSTest v2 labels (treat as read-only)."""
    from judgekit.io.ratings import import_ratings
    from judgekit.rubric.model import load_rubric
    from judgekit.store.database import Store

    path = tmp_path_factory.mktemp("report-xstest") / "judgekit.db"
    with Store(path) as s:
        import_ratings(s, XSTEST_LABELS, load_rubric("refusal"),
                       raters={"annotation_1": "annotation_1", "annotation_2": "annotation_2"},
                       reference={"final": "final_label"},
                       judges={"string_match": "strmatch_label", "gpt4": "gpt4_label"})
    return path


# ----------------------------------------------------------------------------- chromium
CHROMIUM_FLAGS = [
    "--headless", "--no-sandbox", "--disable-gpu", "--disable-quic", "--no-first-run",
    "--disable-background-networking", "--disable-component-update", "--disable-sync",
    "--hide-scrollbars", "--enable-logging=stderr", "--v=0",
]


def _install_chromium() -> str:
    """Install Debian's chromium (the tests need a real browser); fail with the reason if we can't."""
    if os.geteuid() != 0:
        pytest.fail("chromium is not installed and the tests are not root: run `apt-get install -y chromium`.")
    for cmd in (["apt-get", "update"], ["apt-get", "install", "-y", "chromium"]):
        proc = subprocess.run(cmd, capture_output=True, text=True, timeout=900,
                              env={**os.environ, "DEBIAN_FRONTEND": "noninteractive"})
        if proc.returncode != 0:
            pytest.fail(f"cannot install chromium: `{' '.join(cmd)}` exited {proc.returncode}: "
                        f"{(proc.stderr or proc.stdout).strip()[-800:]}")
    found = shutil.which("chromium")
    if not found:
        pytest.fail("apt-get installed chromium but no `chromium` is on PATH.")
    return found


class Browser:
    """Headless Chromium, one fresh profile per call, every run bounded in time."""

    def __init__(self, exe: str, root: Path) -> None:
        self.exe = exe
        self.root = root
        self._n = 0

    def run(self, page: Path, *args: str) -> subprocess.CompletedProcess[str]:
        self._n += 1
        profile = self.root / f"profile-{self._n}"
        cmd = [self.exe, *CHROMIUM_FLAGS, f"--user-data-dir={profile}", *args, page.resolve().as_uri()]
        proc = subprocess.run(cmd, capture_output=True, text=True, timeout=120)
        assert proc.returncode == 0, f"chromium exited {proc.returncode}: {proc.stderr[-2000:]}"
        return proc

    def dump_dom(self, page: Path) -> tuple[str, list[str]]:
        """The DOM after scripts ran (if any could), and the page's console lines."""
        proc = self.run(page, "--dump-dom")
        return proc.stdout, console_lines(proc.stderr)

    def screenshot(self, page: Path, out: Path, size: str = "1280,2400") -> tuple[Path, list[str]]:
        proc = self.run(page, f"--screenshot={out}", f"--window-size={size}")
        assert out.is_file(), f"no screenshot written: {proc.stderr[-2000:]}"
        return out, console_lines(proc.stderr)


def console_lines(stderr: str) -> list[str]:
    """Lines chromium logs for the page's console (errors, CSP violations, uncaught exceptions)."""
    return [ln for ln in stderr.splitlines() if ":CONSOLE" in ln or "Uncaught" in ln]


@pytest.fixture(scope="session")
def report_browser(tmp_path_factory) -> Browser:
    exe = shutil.which("chromium") or _install_chromium()
    return Browser(exe, tmp_path_factory.mktemp("chromium"))


# ----------------------------------------------------------------------------- PNG
def decode_png(path: Path) -> tuple[int, int, list[bytes]]:
    """Decode an 8-bit RGB/RGBA, non-interlaced PNG: (width, height, rows of raw pixel bytes)."""
    data = path.read_bytes()
    assert data[:8] == b"\x89PNG\r\n\x1a\n", "not a PNG"
    pos, idat, width = 8, b"", 0
    height = depth = ctype = interlace = 0
    while pos < len(data):
        (length,) = struct.unpack(">I", data[pos:pos + 4])
        kind = data[pos + 4:pos + 8]
        body = data[pos + 8:pos + 8 + length]
        if kind == b"IHDR":
            width, height, depth, ctype, _, _, interlace = struct.unpack(">IIBBBBB", body)
        elif kind == b"IDAT":
            idat += body
        pos += 12 + length
    assert depth == 8 and ctype in (2, 6) and interlace == 0, (depth, ctype, interlace)
    bpp = 3 if ctype == 2 else 4
    raw = zlib.decompress(idat)
    stride = width * bpp
    rows: list[bytes] = []
    prev = bytearray(stride)
    i = 0
    for _ in range(height):
        ftype = raw[i]
        line = bytearray(raw[i + 1:i + 1 + stride])
        i += 1 + stride
        for x in range(stride):
            a = line[x - bpp] if x >= bpp else 0
            b = prev[x]
            c = prev[x - bpp] if x >= bpp else 0
            if ftype == 1:
                line[x] = (line[x] + a) & 255
            elif ftype == 2:
                line[x] = (line[x] + b) & 255
            elif ftype == 3:
                line[x] = (line[x] + (a + b) // 2) & 255
            elif ftype == 4:
                p = a + b - c
                pa, pb, pc = abs(p - a), abs(p - b), abs(p - c)
                pred = a if pa <= pb and pa <= pc else (b if pb <= pc else c)
                line[x] = (line[x] + pred) & 255
        rows.append(bytes(line) if bpp == 3 else bytes(v for k, v in enumerate(line) if k % 4 != 3))
        prev = line
    return width, height, rows


# ----------------------------------------------------------------------------- CLI
@pytest.fixture(scope="session")
def report_cli():
    """The real `judgekit` click group with the report command on it (registered by the lead in
    cli/__init__.py; added here if it is not there yet)."""
    from judgekit.cli import main
    from judgekit.cli.report import report_cmd

    if "report" not in main.commands:
        main.add_command(report_cmd)
    return main


@pytest.fixture(scope="session")
def xstest_verdict(report_xstest_store, tmp_path_factory) -> Path:
    """verdict.json of the real gate with the shipped XSTest policy over the shipped labels."""
    import json

    from judgekit.gate.run import run_gate
    from judgekit.store.database import Store

    with Store(report_xstest_store) as s:
        verdict, _ = run_gate(s, XSTEST_POLICY)
    path = tmp_path_factory.mktemp("report-verdict") / "verdict.json"
    path.write_text(json.dumps(verdict), encoding="utf-8")
    return path
