"""`judgekit import hf://datasets/OWNER/NAME@REVISION/FILE` through fsspec's `hf` file system: the
tests register a local file system under `hf` (the hub is not reachable), so the import takes the
same path as with huggingface_hub's HfFileSystem."""

from __future__ import annotations

import json
from pathlib import Path

import fsspec
import pytest
from click.testing import CliRunner
from fsspec.implementations.dirfs import DirFileSystem
from fsspec.implementations.local import LocalFileSystem

from judgekit.cli import main
from judgekit.store.database import Store

CSV = "id,question,answer,ann1,ann2\n" + "".join(
    f"q{n},Prompt {n},Answer {n},{lab},{lab}\n"
    for n, lab in enumerate(["full_refusal", "full_compliance", "partial_refusal"] * 4))


@pytest.fixture()
def hub(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    """A local folder served as the `hf` file system: datasets/OWNER/NAME@REVISION/FILE."""
    root = tmp_path / "hub"
    for rev, text in (("v1", CSV), ("v2", CSV.replace("q0,Prompt 0,Answer 0,full_refusal,full_refusal",
                                                      "q0,Prompt 0,Answer 0,full_compliance,full_compliance"))):
        f = root / "datasets" / "acme" / "refusals" / f"@{rev}" / "data" / "labels.csv"
        f.parent.mkdir(parents=True)
        f.write_text(text, encoding="utf-8")

    class LocalHub(DirFileSystem):
        """`datasets/acme/refusals@v1/data/labels.csv` -> root/datasets/acme/refusals/@v1/data/labels.csv"""

        def __init__(self, **kwargs: object) -> None:
            super().__init__(path=str(root), fs=LocalFileSystem())

        def _join(self, path):  # type: ignore[no-untyped-def]
            return super()._join(path.replace("@", "/@", 1) if isinstance(path, str) else path)

    fsspec.register_implementation("hf", LocalHub, clobber=True)
    monkeypatch.setenv("JUDGEKIT_HF_CACHE", str(tmp_path / "cache"))
    yield tmp_path
    from fsspec.registry import _registry

    _registry.pop("hf", None)


def _import(hub: Path, uri: str, *extra: str):
    return CliRunner().invoke(main, ["import", uri, "--rubric", "refusal", "--map", "item_id=id,prompt=question,response=answer",
                                     "--raters", "ann1,ann2", "--store", str(hub / "s.db"), "--json", "-", *extra])


def test_a_dataset_file_imports_with_the_mapping_options_of_a_local_file(hub: Path) -> None:
    r = _import(hub, "hf://datasets/acme/refusals@v1/data/labels.csv")
    assert r.exit_code == 0, r.output
    (hub / "local.csv").write_text(CSV, encoding="utf-8")
    local = CliRunner().invoke(main, ["import", str(hub / "local.csv"), "--rubric", "refusal",
                                      "--map", "item_id=id,prompt=question,response=answer",
                                      "--raters", "ann1,ann2", "--store", str(hub / "local.db")])
    assert local.exit_code == 0, local.output
    with Store(str(hub / "s.db")) as a, Store(str(hub / "local.db")) as b:
        cols = ["item_id", "rater_id", "label"]
        got = a.ratings(rubric="refusal")[cols].sort_values(cols).reset_index(drop=True)
        want = b.ratings(rubric="refusal")[cols].sort_values(cols).reset_index(drop=True)
        assert got.equals(want) and len(got) == 24
    # the copy read is kept under the revision it came from
    assert (hub / "cache" / "datasets" / "acme" / "refusals" / "v1" / "data" / "labels.csv").read_text(
        encoding="utf-8") == CSV


def test_the_revision_is_pinned_in_the_import_digest(hub: Path) -> None:
    first = _import(hub, "hf://datasets/acme/refusals@v1/data/labels.csv")
    assert first.exit_code == 0, first.output
    again = _import(hub, "hf://datasets/acme/refusals@v1/data/labels.csv")
    assert again.exit_code == 0, again.output
    assert json.loads(again.stdout)["written"] == {"new": 0, "changed": 0, "unchanged": 24}
    other = _import(hub, "hf://datasets/acme/refusals@v2/data/labels.csv")
    assert other.exit_code == 0, other.output
    assert json.loads(other.stdout)["written"] == {"new": 0, "changed": 2, "unchanged": 22}
    with Store(str(hub / "s.db")) as db:
        q0 = db.ratings(rubric="refusal", rater_ids=["ann1"]).set_index("item_id").loc["q0"]
    assert q0["label"] == "full_compliance"


@pytest.mark.parametrize(("uri", "said"), [
    ("hf://datasets/acme/refusals/data/labels.csv", "names no revision"),
    ("hf://datasets/acme/refusals@v1/data/missing.csv", "no such file"),
    ("hf://models/acme/x@v1/a.csv", "hf://datasets/OWNER/NAME@REVISION/FILE"),
])
def test_a_bad_dataset_uri_is_one_sentence(hub: Path, uri: str, said: str) -> None:
    r = _import(hub, uri)
    assert r.exit_code == 2 and said in r.output and "Traceback" not in r.output
    assert not (hub / "s.db").exists()
