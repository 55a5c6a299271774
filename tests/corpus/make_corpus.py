"""The bad-input corpus: every user-written input, broken in every way we know.

Each case is one broken file (or a few files, such as a panel and its items) and the ``judgekit``
command that reads it. Run on a copy of the store :func:`base.build_template` makes, every case
must end with exit code 2, one sentence naming the file and the row/line or key (the case's
``expect``), no traceback, and the store exactly as it was (a canonical dump before and after).
Each control is a valid file with a trap a careless reader falls into (a byte order mark, CRLF
line ends, Excel quoting, label variants the rubric's aliases accept, a 1M-character rationale):
it must import with exit 0 and the values stored exactly.

The files are generated, deterministically, at test time (``tests/cli/test_bad_input_corpus.py``), so
the repository stays small. To look at them::

    python tests/corpus/make_corpus.py OUT_DIR   # OUT_DIR/<kind>/<case>/..., cases.json, _template/

The cases live by input family: ``cases_config.py`` (rubric, policy, panel, criteria, sample
spec), ``cases_tables.py`` (import CSV, JSONL, JSON, Parquet; long and wide; --items files),
``cases_logs.py`` (Label Studio exports, Inspect logs, verdicts), ``cases_hostile.py`` (special
files, ReDoS patterns, huge headers, invisible ids, far times), ``cases_selective.py`` (calibration
files and selective policies), ``controls.py``.
"""

from __future__ import annotations

import json
import sys
from pathlib import Path

if __package__ in (None, ""):  # run as a script: make ``corpus`` importable
    sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

from corpus import (  # noqa: E402
    cases_batch,
    cases_config,
    cases_hostile,
    cases_knobs,
    cases_logs,
    cases_mapping,
    cases_selective,
    cases_store,
    cases_tables,
    cases_trust,
    controls,
)
from corpus.base import Case, Control, Valid, build_template, write_files  # noqa: E402

CASES: list[Case] = [*cases_config.CASES, *cases_tables.CASES, *cases_logs.CASES, *cases_mapping.CASES,
                     *cases_hostile.CASES, *cases_store.CASES,
                     *cases_knobs.CASES, *cases_batch.CASES, *cases_selective.CASES, *cases_trust.CASES]
CONTROLS: list[Control] = list(controls.CONTROLS)
#: the unbroken files the cases break (each must be accepted)
VALID: list[Valid] = [*cases_config.VALID, *cases_tables.VALID, *cases_logs.VALID, *cases_mapping.VALID,
                      *cases_hostile.VALID, *cases_store.VALID,
                      *cases_knobs.VALID, *cases_batch.VALID, *cases_selective.VALID, *cases_trust.VALID]


def _check_unique() -> None:
    ids = [c.id for c in [*CASES, *CONTROLS]]
    dup = sorted({i for i in ids if ids.count(i) > 1})
    if dup:
        raise ValueError(f"corpus case ids used twice: {dup}")


_check_unique()


def main(argv: list[str]) -> int:
    if len(argv) != 1:
        print("usage: python tests/corpus/make_corpus.py OUT_DIR", file=sys.stderr)
        return 2
    out = Path(argv[0])
    template = out / "_template"
    build_template(template)
    manifest = []
    for v in VALID:
        write_files(v.files, out / "valid" / v.id, template)
    for c in [*CASES, *CONTROLS]:
        write_files(c.files, out / c.kind / c.id, template)
        manifest.append({"id": c.id, "kind": c.kind, "args": list(c.args),
                         "control": isinstance(c, Control),
                         "expect": list(getattr(c, "expect", ())), "xfail": c.xfail})
    (out / "cases.json").write_text(json.dumps(manifest, indent=1) + "\n", encoding="utf-8")
    n_files = sum(len(c.files) for c in CASES)
    print(f"wrote {len(CASES)} bad cases ({n_files} files) and {len(CONTROLS)} controls to {out}")
    return 0


if __name__ == "__main__":
    raise SystemExit(main(sys.argv[1:]))
