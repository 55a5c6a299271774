"""The probes of ``judgekit demo``: the shipped XSTest v2 probes (offline, on the imported
labels) and the demo panel's probes, whose perturbed variants of the LLM judge are served by the
project's fake provider (as the demo panel itself is: :mod:`judgekit.judges.demo`)."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import yaml

from judgekit.judges.demo import demo_panel_dir, scripted_judge
from judgekit.judges.panelfile import panel_from_dict
from judgekit.probes.perturb import run_variants
from judgekit.probes.probefile import load_probe_file
from judgekit.probes.run import run_probes
from judgekit.testing.fakeserver import FakeServer


def xstest_probes(store: Any, annotations: Path) -> dict[str, Any]:
    """The probes of ``annotations/xstest-v2/probes.yaml`` over a store with the XSTest labels."""
    path = annotations / "xstest-v2" / "probes.yaml"
    probe, _ = load_probe_file(path)
    return run_probes(store, probe, str(path))


def panel_probes(store: Any) -> dict[str, Any]:
    """The demo panel's probes (``annotations/demo-panel/probes.yaml``) over the demo panel's
    store: its perturbed variants are asked through the fake provider (cached: a rerun makes no
    call), then every probe runs. ``perturbed`` says what each variant sent."""
    folder = demo_panel_dir()
    path = folder / "probes.yaml"
    probe, _ = load_probe_file(path)
    assert probe.perturb is not None
    data = yaml.safe_load((folder / probe.perturb.panel).read_text(encoding="utf-8"))
    with FakeServer(scripted_judge, keep_requests=0) as server:
        for entry in data["judges"]:
            if str(entry["model"]).startswith("openai-compatible:"):
                entry["model"] = f"openai-compatible:{server.openai_url}#{str(entry['model']).rpartition('#')[2]}"
        panel = panel_from_dict(data, base_dir=folder, source=str(folder / probe.perturb.panel))
        perturbed = run_variants(store, panel, judges=probe.perturb.judges, variants=probe.perturb.variants,
                                 padding=probe.perturb.padding, where=f"Probe file {path}")
        requests = server.stats.requests
    doc = run_probes(store, probe, str(path))
    doc["perturbed"] = {k: {x: v[x] for x in ("judges", "answered", "cached")} for k, v in perturbed.items()}
    doc["calls"] = requests
    return doc
