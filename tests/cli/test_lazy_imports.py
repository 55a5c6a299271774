"""Lazy imports: the command line loads only what the command it runs uses.

Each check runs in a fresh interpreter (``sys.modules`` of the test process already holds
everything), with this checkout first on the path. The heavy stacks are pandas, numpy,
scikit-learn, scipy and the two provider SDKs; every public name of the packages made lazy still
imports.
"""

from __future__ import annotations

import csv
import importlib
import json
import os
import sqlite3
import subprocess
import sys
from pathlib import Path

import pytest

pytest.register_assert_rewrite("panel_fixtures")
pytest_plugins = ["panel_fixtures"]

from click.testing import CliRunner  # noqa: E402
from conftest import copy_store  # noqa: E402
from panel_fixtures import labelled_items, write_items, write_panel  # noqa: E402

from judgekit.cli import main  # noqa: E402

REPO = Path(__file__).resolve().parents[2]
HEAVY = ("pandas", "numpy", "sklearn", "scipy", "anthropic", "openai")

# Runs the command line in-process, then reports which heavy modules it loaded (on stderr, last).
PROBE = """
import json, os, sys
from judgekit.cli import main
code = 0
try:
    main(sys.argv[1:], prog_name="judgekit")
except SystemExit as exc:
    code = exc.code
heavy = sorted({m.split(".")[0] for m in sys.modules} & set(json.loads(os.environ["HEAVY"])))
print("PROBE " + json.dumps({"code": code, "heavy": heavy}), file=sys.stderr)
"""


def _env(**extra: str) -> dict[str, str]:
    env = {k: v for k, v in os.environ.items() if not k.startswith(("JUDGEKIT_", "OPENAI", "ANTHROPIC"))}
    env["PYTHONPATH"] = os.pathsep.join([str(REPO), *filter(None, [os.environ.get("PYTHONPATH")])])
    env.update(extra)
    return env


def probe(args: list[str], cwd: Path, **env: str) -> tuple[int, list[str], str]:
    """(exit code, heavy modules loaded, stdout) of ``judgekit ARGS`` in a fresh interpreter."""
    res = subprocess.run([sys.executable, "-c", PROBE, *args], cwd=cwd, capture_output=True,
                         text=True, timeout=120, env=_env(HEAVY=json.dumps(HEAVY), **env))
    last = res.stderr.strip().splitlines()[-1]
    assert last.startswith("PROBE "), res.stderr
    got = json.loads(last[len("PROBE "):])
    return got["code"], got["heavy"], res.stdout


def test_import_cli_loads_no_heavy_module(tmp_path):
    code = ("import sys, judgekit.cli; "
            "print(sorted({m.split('.')[0] for m in sys.modules} & set(sys.argv[1:])))")
    res = subprocess.run([sys.executable, "-c", code, *HEAVY, "rich"], cwd=tmp_path,
                         capture_output=True, text=True, timeout=120, env=_env())
    assert res.returncode == 0, res.stderr
    # nor rich: judgekit.core.console makes its rich console on first use (LazyConsole)
    assert res.stdout.strip() == "[]"


def test_help_and_rubrics_load_no_heavy_module(tmp_path):
    code, heavy, out = probe(["--help"], tmp_path)
    assert (code, heavy) == (0, [])
    assert "Typical flow:" in out and "judge" in out and "analyze" in out
    code, heavy, out = probe(["rubrics"], tmp_path)
    assert (code, heavy) == (0, [])
    assert "refusal@1" in out and "restrictiveness@1" in out
    code, heavy, out = probe(["rubrics", "refusal"], tmp_path)
    assert (code, heavy) == (0, [])
    assert "full_refusal" in out
    code, heavy, out = probe(["labelstudio", "config", "--rubric", "refusal"], tmp_path)
    assert (code, heavy) == (0, [])
    assert '<Choice value="full_refusal"' in out


def test_a_rerun_that_makes_no_call_imports_no_sdk(tmp_path, fake):
    """Both SDK judges answer every item once; the rerun, with the provider gone, answers all
    from the cache without importing either SDK, pandas, numpy, scikit-learn or scipy."""
    write_items(tmp_path, labelled_items(12))
    panel = write_panel(tmp_path, [
        {"id": "oa", "model": f"openai-compatible:{fake.openai_url}#m"},
        {"id": "an", "model": "anthropic:claude-haiku-4-5", "base_url": fake.url,
         "api_key_env": "JK_TEST_KEY"},
    ], aggregate=None)
    store = tmp_path / "s.db"
    os.environ["JK_TEST_KEY"] = "k"
    try:
        first = CliRunner().invoke(main, ["judge", str(panel), "--store", str(store), "--no-progress"])
    finally:
        del os.environ["JK_TEST_KEY"]
    assert first.exit_code == 0, first.output
    assert fake.stats.requests == 24
    fake.stop()  # nothing listens any more: a call would fail, and be reported as an error
    code, heavy, out = probe(["judge", str(panel), "--store", str(store), "--no-progress"],
                             tmp_path, JK_TEST_KEY="k")
    assert code == 0, out
    assert "calls 0 answered now, 24 from cache; ratings 0 abstentions, 0 errors" in out
    # nor pandas: the items are read, checked and compared with the stored ones as plain rows
    assert heavy == [], heavy



def test_a_rerun_with_the_progress_bar_on_auto_imports_no_rich(tmp_path):
    """Nothing to call: no progress bar, so its rich console is never made (nor is rich
    imported), whether or not stderr is a terminal."""
    write_items(tmp_path, labelled_items(6))
    panel = write_panel(tmp_path, [{"id": "kw", "model": "rules:refusal-keywords"}], aggregate=None)
    store = tmp_path / "s.db"
    first = CliRunner().invoke(main, ["judge", str(panel), "--store", str(store), "--no-progress"])
    assert first.exit_code == 0, first.output
    code = ("import sys; from judgekit.cli import main\n"
            "try:\n    main(sys.argv[1:], prog_name='judgekit')\nexcept SystemExit:\n    pass\n"
            "print('RICH', 'rich' in sys.modules, file=sys.stderr)")
    res = subprocess.run([sys.executable, "-c", code, "judge", str(panel), "--store", str(store)],
                         cwd=tmp_path, capture_output=True, text=True, timeout=120, env=_env())
    assert "0 answered now, 6 from cache" in res.stdout, res.stderr
    assert res.stderr.strip().splitlines()[-1] == "RICH False"

def test_a_rerun_of_a_panel_with_a_majority_imports_no_pandas(tmp_path, fake):
    """Two judges and the default aggregate (majority): the rerun checks the derived ratings
    from plain rows, finds them unchanged and writes nothing."""
    write_items(tmp_path, labelled_items(9))
    panel = write_panel(tmp_path, [{"id": "m1", "model": f"openai-compatible:{fake.openai_url}#m1"},
                                   {"id": "m2", "model": f"openai-compatible:{fake.openai_url}#m2"}])
    store = tmp_path / "s.db"
    first = CliRunner().invoke(main, ["judge", str(panel), "--store", str(store), "--no-progress"])
    assert first.exit_code == 0, first.output
    with sqlite3.connect(store) as conn:
        before = list(conn.execute("SELECT * FROM ratings ORDER BY rowid"))
    assert sum(r[1] == "panel:majority" for r in before) == 9
    fake.stop()
    code, heavy, out = probe(["judge", str(panel), "--store", str(store), "--no-progress"], tmp_path)
    assert code == 0, out
    assert "0 answered now, 18 from cache" in out
    assert heavy == [], heavy
    with sqlite3.connect(store) as conn:
        assert list(conn.execute("SELECT * FROM ratings ORDER BY rowid")) == before


def test_a_rerun_of_csv_items_per_framing_imports_no_pandas(tmp_path):
    """The row path for CSV items and a panel split by ``rubric_by``: the rerun answers from
    the cache, stores nothing new and loads no heavy module."""
    with (tmp_path / "items.csv").open("w", newline="", encoding="utf-8") as fh:
        out = csv.writer(fh)
        out.writerow(["item_id", "prompt", "response", "framing"])
        for i, r in enumerate(labelled_items(6)):
            out.writerow([r["item_id"], r["prompt"], r["response"], 1 + i % 2])
    panel = tmp_path / "panel.yaml"
    panel.write_text("rubric: refusal\nitems: items.csv\naggregate: null\n"
                     "rubric_by: {column: framing, rubrics: {1: refusal, 2: refusal}}\n"
                     "judges:\n  - {id: kw, model: 'rules:refusal-keywords'}\n", encoding="utf-8")
    store = tmp_path / "s.db"
    first = CliRunner().invoke(main, ["judge", str(panel), "--store", str(store), "--no-progress"])
    assert first.exit_code == 0, first.output
    assert "6 answered now, 0 from cache" in first.output
    code, heavy, out = probe(["judge", str(panel), "--store", str(store), "--no-progress"], tmp_path)
    assert code == 0, out
    assert "0 answered now, 6 from cache" in out
    assert heavy == [], heavy


def test_gate_on_a_small_store_loads_no_sdk_nor_scipy(tmp_path, xstest_store):
    db = copy_store(xstest_store, tmp_path / "x.db")
    policy = REPO / "annotations" / "xstest-v2" / "policy.yaml"
    code, heavy, out = probe(["gate", str(policy), "--store", db, "--out", str(tmp_path / "g")],
                             tmp_path)
    assert code == 1, out  # both shipped judges fail the shipped policy
    assert json.loads((tmp_path / "g" / "verdict.json").read_text())["state"] == "fail"
    assert not {"openai", "anthropic", "sklearn", "scipy"} & set(heavy), heavy



def test_agree_on_xstest_loads_no_pandas_scipy_nor_sklearn(tmp_path, xstest_store):
    """The lean agreement path reads codes by SQL and codes item ids without pandas; its
    figures are those of the frame path (tests/agreement/test_agreement_report.py pins them)."""
    db = copy_store(xstest_store, tmp_path / "x.db")
    out_json = tmp_path / "a.json"
    code, heavy, out = probe(["agree", "--rubric", "refusal", "--store", db, "--resamples", "200",
                              "--json", str(out_json)], tmp_path)
    assert code == 0, out
    report = json.loads(out_json.read_text())
    assert report["n_resamples"] == 200 and report["judges"] == ["string_match", "gpt4"]
    assert "numpy" in heavy  # the statistics are numpy's
    assert not {"pandas", "sklearn", "scipy", "openai", "anthropic"} & set(heavy), heavy



def test_import_of_the_xstest_labels_loads_no_pandas_nor_numpy(tmp_path):
    """The wide XSTest file (a column per rater) is streamed without pandas
    (tests/io/test_import_wide_stream.py: the same stored rows as the whole-file path)."""
    code, heavy, out = probe(["import", str(REPO / "annotations" / "xstest-v2" / "xstest_v2_labels.csv"),
                              "--rubric", "refusal", "--raters", "annotation_1,annotation_2",
                              "--reference", "final=final_label",
                              "--judges", "string_match=strmatch_label,gpt4=gpt4_label",
                              "--store", str(tmp_path / "x.db")], tmp_path)
    assert code == 0, out
    assert "Imported 11250 ratings of 2250 items" in out
    assert heavy == [], heavy
    # the summary is printed with click: the rich console is never made
    code = ("import sys; from judgekit.cli import main\n"
            "try:\n    main(sys.argv[1:], prog_name='judgekit')\nexcept SystemExit:\n    pass\n"
            "print('RICH', 'rich' in sys.modules, file=sys.stderr)")
    res = subprocess.run([sys.executable, "-c", code, "import",
                          str(REPO / "annotations" / "xstest-v2" / "xstest_v2_labels.csv"),
                          "--rubric", "refusal", "--raters", "annotation_1",
                          "--store", str(tmp_path / "y.db")],
                         cwd=tmp_path, capture_output=True, text=True, timeout=120, env=_env())
    assert "Imported 2250 ratings of 2250 items" in res.stdout, res.stderr
    assert res.stderr.strip().splitlines()[-1] == "RICH False"

# The public names of each package before its imports were made lazy (``__all__`` where it has
# one); every one must still import, by attribute and by ``from ... import``.
PUBLIC = {
    "judgekit": ["JudgekitError", "UntrustedJudgeError", "__version__", "agree", "gate", "require_trusted"],
    "judgekit.agreement": [
        "AgreementReport", "AltTestHuman", "AltTestResult", "ConfusionResult", "LEVELS", "ac1_ci",
        "ac2_ci", "agreement_report", "alpha_ci", "alt_test", "bootstrap_ci", "bp_ci", "brennan_prediger", "cohen_kappa",
        "confusion_matrix", "conger_ci", "conger_kappa", "fleiss_ci", "fleiss_kappa", "gwet_ac1",
        "gwet_ac2", "kappa_ci", "krippendorff_alpha", "percent_agreement", "percent_agreement_ci",
        "scott_ci", "scott_pi", "undefined_reason",
    ],
    "judgekit.judges": [
        "BatchJudge", "Completion", "Judge", "JudgeCallError", "JudgeEntry", "JudgeRequest",
        "build_judge", "judge_kinds", "parse_spec", "register_judge",
    ],
    "judgekit.report": ["render_report", "write_report"],
    "judgekit.stats": [
        "abs_interval",
        "bootstrap_stat",
        "bounded_mean_interval",
        "calibrate_cascade",
        "calibrate_threshold",
        "CascadeCalibration",
        "clopper_pearson_bound",
        "clopper_pearson_interval",
        "cluster_weights",
        "Concordance",
        "ConfidenceSequence",
        "n_for_certification",
        "n_for_joint_certification",
        "n_for_kappa",
        "n_for_power",
        "normal_quantile",
        "percentile_ci",
        "percentile_interval",
        "ppi_concordance",
        "ppi_drift",
        "ppi_mean",
        "PPIMean",
        "PPIPairwise",
        "sequential_decision",
        "SequentialDecision",
        "SimPlan",
        "smallest_margin",
        "stratified_ppi_mean",
        "StratifiedPPIMean",
        "t_interval",
        "t_quantile",
        "ThresholdCalibration",
        "TurnUnits",
        "Undecidable",
        "what_it_shows",
        "wilson_interval",
        "Z95",
        "z_two_sided",
    ],
    "judgekit.testing": ["FakeRequest", "FakeServer", "Reply", "label_reply", "make_study", "write_study"],
    "judgekit.cli": ["main"],
    "judgekit.io": ["ImportOptions", "ImportSummary", "import_ratings", "parse_column_map", "prepare_ratings", "read_csv_fast", "read_inspect_log", "read_items", "read_table", "table_format", "write_table"],
    "judgekit.annotation": ["SampleSpec", "SampleSummary", "draw_sample", "load_spec", "record_sample", "sample_design", "sample_items", "spec_from_dict"],
    "judgekit.selective": ["SelectiveCalibration", "SelectivePolicy", "apply_policy", "calibrate_policy", "cascade_costs", "load_selective_policy", "read_calibration", "read_judgments", "write_calibration"],
    "judgekit.probes": ["ProbeFile", "covariate_effect", "load_probe_file", "run_probes", "stratified_difference", "stuart_maxwell"],
    "judgekit.core": ["ConfigModel", "clean", "digest", "echo", "lazy_exports", "make_console", "read_yaml_mapping", "regular_input", "regular_output", "write_text_atomic"],
    "judgekit.annotation.labelstudio": [
        "Annotation", "COMMENT_CONTROL", "ENV_TOKEN", "ENV_URL", "LabelStudioClient", "PullSummary",
        "PushOptions", "PushSummary", "annotations_to_ratings", "check_rubrics", "from_flat_rows",
        "from_full_tasks", "label_config", "load_rubrics", "parse_annotator_map", "parse_marker",
        "pull", "push", "rater_name", "read_export", "rubric_marker", "task_data",
    ],
}
# where each name is defined (the lazy attribute must be that very object)
HOME = {
    "judgekit.agreement": {"LEVELS": "alpha", "krippendorff_alpha": "alpha", "alt_test": "alternative_annotator",
                           "AltTestHuman": "alternative_annotator", "AltTestResult": "alternative_annotator",
                           "ConfusionResult": "confusion", "confusion_matrix": "confusion",
                           "conger_kappa": "conger", "cohen_kappa": "kappa", "fleiss_kappa": "kappa",
                           "scott_pi": "kappa", "brennan_prediger": "chance", "gwet_ac1": "chance",
                           "gwet_ac2": "chance", "percent_agreement": "chance",
                           "undefined_reason": "chance", "agreement_report": "report",
                           "AgreementReport": "report_data"},
    "judgekit.stats": {"wilson_interval": "intervals", "percentile_ci": "intervals", "Concordance": "concordance",
                       "ppi_mean": "ppi", "n_for_power": "power"},
    "judgekit.judges": {"build_judge": "base", "JudgeEntry": "base", "Judge": "base"},
    "judgekit.report": {"render_report": "document", "write_report": "document"},
    "judgekit.annotation.labelstudio": {"label_config": "config", "push": "sync", "pull": "sync",
                                        "LabelStudioClient": "client", "read_export": "exports"},
}


@pytest.mark.parametrize("package", sorted(PUBLIC))
def test_every_public_name_still_imports(package):
    mod = importlib.import_module(package)
    names = PUBLIC[package]
    assert sorted(set(names) - {"__version__"}) == sorted(set(getattr(mod, "__all__", names)) - {"__version__"})
    for name in names:
        assert getattr(mod, name) is not None
        ns: dict[str, object] = {}
        exec(f"from {package} import {name}", ns)  # noqa: S102 - a fixed import statement
        assert ns[name] is getattr(mod, name)
    for name, home in HOME.get(package, {}).items():
        assert getattr(mod, name) is getattr(importlib.import_module(f"{package}.{home}"), name)
    star: dict[str, object] = {}
    exec(f"from {package} import *", star)  # noqa: S102
    assert set(getattr(mod, "__all__", [])) <= set(star)
    if hasattr(mod, "__all__"):
        assert set(mod.__all__) <= set(dir(mod))
    with pytest.raises(AttributeError):
        mod.no_such_name  # noqa: B018


def test_lazy_packages_import_lightly(tmp_path):
    """Importing a lazy package loads none of its statistics or renderers until a name is used."""
    code = ("import sys, judgekit.agreement, judgekit.judges, judgekit.report, judgekit.stats; "
            "print(sorted(m for m in ('numpy', 'scipy', 'pydantic', 'judgekit.report.html') if m in sys.modules))")
    res = subprocess.run([sys.executable, "-c", code], cwd=tmp_path, capture_output=True, text=True,
                         timeout=120, env=_env())
    assert res.returncode == 0, res.stderr
    assert res.stdout.strip() == "[]"


def test_the_command_line_runs_numpy_with_one_blas_thread_unless_told_otherwise():
    """``import judgekit.cli`` (before numpy) sets OPENBLAS_NUM_THREADS=1; a user's own value stays."""
    code = ("import os, judgekit.cli\n"
            "print(os.environ['OPENBLAS_NUM_THREADS'], os.environ['MKL_NUM_THREADS'])")
    env = {k: v for k, v in _env().items() if k not in ("OPENBLAS_NUM_THREADS", "MKL_NUM_THREADS")}
    res = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, timeout=60, env=env)
    assert res.stdout.split() == ["1", "1"], res.stderr
    env["OPENBLAS_NUM_THREADS"] = "4"
    res = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, timeout=60, env=env)
    assert res.stdout.split() == ["4", "1"], res.stderr
