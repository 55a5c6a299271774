"""The official SDK's async client of a remote judge, imported and made on first use: a panel
rerun that sends nothing (every answer cached) or a ``--dry-run`` never imports the SDK."""

from __future__ import annotations

import contextlib
import importlib
from typing import Any


class LazySDKClient:
    """Mixin of the SDK judges: ``sdk_module`` (e.g. ``"openai"``) and ``client_class`` (e.g.
    ``"AsyncOpenAI"``) name the client; the judge sets ``_client_args`` (with ``max_retries=0``:
    the panel retries) and ``_client = None`` in its ``__init__``."""

    sdk_module: str
    client_class: str
    _client_args: dict[str, Any]
    _client: Any
    #: (max response bytes, call deadline in seconds) of :mod:`judgekit.judges.bounds`, applied
    #: through the SDK's public ``http_client`` option; None: the SDK's own client
    _bounds: tuple[int, float] | None = None

    @property
    def _sdk(self) -> Any:
        return importlib.import_module(self.sdk_module)

    def prepare(self) -> None:
        """Import the SDK and make the client before the panel paces the first call. A client
        that cannot be made fails again in the first call, where the failure is classified."""
        with contextlib.suppress(Exception):
            self.client  # noqa: B018 - made on first use

    @property
    def client(self) -> Any:
        """The SDK's async client, made on first use."""
        if self._client is None:
            args = dict(self._client_args)
            if self._bounds is not None:
                from judgekit.judges.bounds import bounded_http_client

                args["http_client"] = bounded_http_client(self._sdk, *self._bounds)
            self._client = getattr(self._sdk, self.client_class)(**args)
        return self._client

    async def aclose(self) -> None:
        if self._client is not None:
            await self._client.close()
