"""A store that is created on first use: a failed first ``import`` leaves no store file behind.

``judgekit import`` reads and validates the whole input before it touches the store; with
:class:`DeferredStore` a path where no store exists yet is only created (and migrated) when the
import first reads or writes the store, which is after every check of the input has passed. An
existing store is opened at once, as :class:`~judgekit.store.database.Store` opens it.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

from judgekit.store.database import Store
from judgekit.store.postgres import is_postgres_url


class DeferredStore(Store):
    """:class:`~judgekit.store.database.Store` at ``path``, opened (and created if need be) on the first
    use of any of its attributes when no file is at ``path`` yet; :meth:`close` of a store never
    used does nothing (and so creates nothing)."""

    def __init__(self, path: str | Path, *, lock_timeout: float | None = None) -> None:
        self._deferred = (path, lock_timeout)
        self._opened = False
        p = str(path)
        # an existing store, :memory:, or a folder that does not exist (Store's own error) at once
        if p == ":memory:" or is_postgres_url(p) or Path(p).exists() or not Path(p).parent.exists():
            self._open()
        else:
            self.path = p

    def _open(self) -> None:
        self._opened = True
        path, lock_timeout = self._deferred
        Store.__init__(self, path, lock_timeout=lock_timeout)

    def __getattr__(self, name: str) -> Any:
        # only called for attributes not set yet: the store's own (conn, _lock, _savepoints, ...)
        if name in ("_deferred", "_opened") or self.__dict__.get("_opened", True):
            raise AttributeError(f"{type(self).__name__!r} object has no attribute {name!r}")
        self._open()
        return getattr(self, name)

    @property
    def opened(self) -> bool:
        """Whether the store has been opened (so its file exists)."""
        return self._opened

    def close(self) -> None:
        if self._opened and "conn" in self.__dict__:
            super().close()
