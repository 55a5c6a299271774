"""Import a file of a Hugging Face dataset: ``judgekit import hf://datasets/OWNER/NAME@REVISION/FILE``.

The file is read through the ``hf`` file system of fsspec (``huggingface_hub``'s
:class:`~huggingface_hub.HfFileSystem`, installed with ``pip install 'judgekit-trust[hf]'``) and
copied once into a local cache, under a folder named by the commit it came from:
``<cache>/datasets/OWNER/NAME/<commit>/FILE``. The import then reads the copy as a local file, with
the same mapping options; the copy's path, in the import digest, names the commit: a re-import of
the same revision is a no-op, a new commit is a new input.

The revision is required (a branch such as ``main`` moves; a commit or tag pins the data); a
branch or tag is resolved to its commit through the hub before anything is read. The cache is
``$JUDGEKIT_HF_CACHE``, else ``~/.cache/judgekit/hf``.
"""

from __future__ import annotations

import os
import re
from dataclasses import dataclass
from pathlib import Path, PurePosixPath

from judgekit.integrations.bridge import JudgekitError

__all__ = ["DatasetFile", "is_hf_uri", "local_copy", "parse_hf_uri"]

_URI = re.compile(r"hf:/{1,2}datasets/(?P<owner>[\w.-]+)/(?P<name>[\w.-]+)(?:@(?P<rev>[^/]+))?/(?P<file>.+)")
_COMMIT = re.compile(r"[0-9a-f]{40}")


@dataclass(frozen=True)
class DatasetFile:
    """One file of a dataset repository at one revision."""

    owner: str
    name: str
    revision: str
    file: str

    @property
    def repo_id(self) -> str:
        return f"{self.owner}/{self.name}"

    @property
    def fs_path(self) -> str:
        """The path the ``hf`` file system reads (``datasets/OWNER/NAME@REVISION/FILE``)."""
        return f"datasets/{self.repo_id}@{self.revision}/{self.file}"


def is_hf_uri(path: str | Path) -> bool:
    """Whether ``path`` names a Hugging Face dataset file (``hf://datasets/...``; a
    :class:`~pathlib.Path` has collapsed the ``//``)."""
    return str(path).startswith(("hf://", "hf:/datasets/"))


def parse_hf_uri(uri: str | Path) -> DatasetFile:
    """``hf://datasets/OWNER/NAME@REVISION/FILE`` as its parts; anything else is one sentence."""
    m = _URI.fullmatch(str(uri))
    if m is None:
        raise JudgekitError(f"{uri}: a Hugging Face file is hf://datasets/OWNER/NAME@REVISION/FILE, e.g. "
                            "hf://datasets/natolambert/xstest-v2-copy@main/data/gpt4.csv.")
    if not m["rev"]:
        raise JudgekitError(f"{uri} names no revision; add @REVISION after the dataset name (a commit, "
                            "tag or branch, e.g. @main) so that the import is pinned to its data.")
    parts = PurePosixPath(m["file"]).parts
    if ".." in parts or m["file"].startswith("/"):
        raise JudgekitError(f"{uri}: the file path may not leave the dataset (no '..').")
    return DatasetFile(m["owner"], m["name"], m["rev"], m["file"])


def _filesystem() -> object:
    """fsspec's ``hf`` file system (huggingface_hub's, unless another is registered for ``hf``)."""
    try:
        import fsspec

        return fsspec.filesystem("hf")
    except ImportError:
        raise JudgekitError("Importing from hf:// needs huggingface_hub: "
                            "pip install 'judgekit-trust[hf]'.") from None


def _commit(fs: object, ref: DatasetFile) -> str:
    """The commit ``ref.revision`` names: itself when it is one, else resolved through the hub
    (a file system other than the hub's takes the revision as written)."""
    if _COMMIT.fullmatch(ref.revision):
        return ref.revision
    from_hub = type(fs).__module__.startswith("huggingface_hub")
    if not from_hub:
        return ref.revision
    from huggingface_hub import HfApi

    try:
        sha = HfApi().dataset_info(ref.repo_id, revision=ref.revision).sha
    except Exception as exc:
        raise JudgekitError(f"hf://{ref.fs_path}: the hub did not resolve revision {ref.revision!r} of "
                            f"{ref.repo_id} ({type(exc).__name__}); check the name and revision.") from None
    return str(sha or ref.revision)


def cache_dir() -> Path:
    """Where copies are kept: ``$JUDGEKIT_HF_CACHE``, else ``~/.cache/judgekit/hf``."""
    env = os.environ.get("JUDGEKIT_HF_CACHE")
    return Path(env) if env else Path.home() / ".cache" / "judgekit" / "hf"


def local_copy(uri: str | Path) -> Path:
    """The local copy of the dataset file ``uri`` names, fetched once per commit."""
    ref = parse_hf_uri(uri)
    fs = _filesystem()
    commit = _commit(fs, ref)
    pinned = DatasetFile(ref.owner, ref.name, commit, ref.file)
    local = cache_dir() / "datasets" / ref.owner / ref.name / commit / ref.file
    if local.exists():
        return local
    local.parent.mkdir(parents=True, exist_ok=True)
    part = local.with_name(local.name + ".part")
    try:
        fs.get_file(pinned.fs_path, str(part))  # type: ignore[attr-defined]
    except FileNotFoundError:
        raise JudgekitError(f"{uri}: no such file in {ref.repo_id} at {ref.revision}; check the path "
                            "(the files are listed on the dataset's page, tab 'Files').") from None
    except OSError as exc:
        raise JudgekitError(f"{uri}: could not be read ({exc}); check the network and the name.") from None
    part.replace(local)
    return local
