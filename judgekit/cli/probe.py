"""`judgekit probe`: bias probes of judges (docs/probes.md)."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import click

from judgekit.cli.options import (
    InputPath,
    OutputPath,
    result_options,
    write_json,
)
from judgekit.core.console import echo, lazy_console, safe_text

console = lazy_console()

_WORD = {"pass": "PASS", "fail": "FAIL", "inconclusive": "INCONCLUSIVE"}


@click.command("probe")
@click.argument("probes", type=InputPath(dir_okay=False, path_type=Path))
@click.option("--out", "out_dir", default=".", show_default=True,
              type=OutputPath(file_okay=False, path_type=Path),
              help="Folder for probes.json, probes.md and probes.html (the report's probe section).")
@click.option("--dry-run", is_flag=True,
              help="With a perturb section: say how many calls the panel variants would make and what "
                   "they would cost; send and write nothing.")
@result_options
def probe_cmd(probes: Path, out_dir: Path, dry_run: bool, json_out: str | None, quiet: bool, store_path: str) -> None:
    """Probe judges for biases: covariate (e.g. length), self-preference, stability, label drift,
    and perturbations (label order, padding) that ask the judges again.

    Each probe states its null band (an equivalence margin) and tests the slices of `by` as one
    Holm family. Exit 0 when every probe passes, 1 when any fails, 3 when none fails but some is
    inconclusive, 2 for bad input. Perturbed ratings are stored as `<judge>~<variant>`, which
    `judgekit agree` leaves out unless named.

    \b
    Example:
      judgekit probe annotations/xstest-v2/probes.yaml --out results/
      judgekit probe annotations/demo-panel/probes.yaml --dry-run
      judgekit probe probes.yaml --json | jq '.judges[].state'    # probes.json on stdout
    """
    from judgekit.core.atomic import write_text_atomic
    from judgekit.probes.perturb import run_variants
    from judgekit.probes.probefile import load_probe_file
    from judgekit.probes.run import run_probes
    from judgekit.report.probes import markdown_section, probe_page
    from judgekit.store.database import Store

    # with --json alone stdout carries only the JSON: progress goes to stderr; --quiet: nothing
    to_stdout = json_out == "-"

    def say(text: str) -> None:
        if not quiet:
            echo(text, err=to_stdout)

    probe, _raw = load_probe_file(probes)
    with Store.open_existing(store_path) as store:
        perturbed: dict[str, Any] = {}
        if probe.perturb is not None:
            # everything the probe file says about the store is checked before any call is made
            run_probes(store, probe, str(probes))
            pt = probe.perturb
            # only the judges this file probes are asked again (perturb.judges, default judges)
            perturbed = run_variants(store, probes.parent / pt.panel, judges=pt.judges or list(probe.judges),
                                     variants=pt.variants, padding=pt.padding, dry_run=dry_run,
                                     where=f"Probe file {probes}",
                                     key="perturb.judges" if pt.judges else "judges")
            for variant, s in perturbed.items():
                if dry_run:
                    say(f"{variant}: {s['pending']} calls would be sent ({s['cached']} cached), "
                         f"about ${s['estimated_cost_usd']:.4f}.")
                else:
                    say(f"{variant}: {s['answered']} answered now ({s['calls']} requests), {s['cached']} from cache.")
        if dry_run:
            say("dry run: nothing was sent or written.")
            write_json(json_out, json.dumps({"dry_run": True, "perturbed": perturbed}, indent=1, default=str))
            return
        doc = run_probes(store, probe, str(probes))
    doc["perturbed"] = {k: {x: v[x] for x in ("judges", "calls", "answered", "cached", "cost_usd")}
                        for k, v in perturbed.items()}
    for j in doc["judges"] if not quiet and not to_stdout else []:
        console.print(safe_text(f"{_WORD[j['state']]:<12} {j['judge']}"))
        for r in j["probes"]:
            c = r["check"]
            ci = "" if c["ci"] is None else f" [{c['ci'][0]:.3f}, {c['ci'][1]:.3f}]"
            fig = "n/a" if c["figure"] is None else f"{c['figure']:.3f}"
            console.print(safe_text(f"  {_WORD[c['state']]:<12} {c['name']}: {fig}{ci} vs {c['threshold']:g} "
                                    f"(n={c['n']}) — {c['detail']}"))
    out_dir.mkdir(parents=True, exist_ok=True)
    text = json.dumps(doc, indent=1, default=str)
    path = write_text_atomic(out_dir / "probes.json", text)
    write_text_atomic(out_dir / "probes.md", "\n".join(markdown_section(doc, "#")) + "\n")
    write_text_atomic(out_dir / "probes.html", probe_page(doc))
    say(f"wrote {path}, probes.md and probes.html")
    write_json(json_out, text)
    raise SystemExit({"pass": 0, "fail": 1, "inconclusive": 3}[doc["state"]])


COMMANDS: list[click.Command] = [probe_cmd]
