"""Several instances at once: one authenticated client per base URL (a lane)."""

from __future__ import annotations

from collections.abc import AsyncIterator, Sequence
from contextlib import AsyncExitStack, asynccontextmanager

from threadcase.errors import InstanceError
from threadcase.instance.client import InstanceClient
from threadcase.instance.models import ClientTimeouts

__all__ = ["open_lanes"]


@asynccontextmanager
async def open_lanes(
    base_urls: Sequence[str],
    *,
    email: str,
    password: str,
    timeouts: ClientTimeouts | None = None,
) -> AsyncIterator[list[InstanceClient]]:
    """Probe every base URL's health, log in to each, and yield the clients in order.

    Raises :class:`InstanceError` naming every lane that is not ready, before any login, so a
    misconfigured lane list fails in one message instead of one case at a time.
    """
    clients = [InstanceClient(url, email=email, password=password, timeouts=timeouts) for url in base_urls]
    async with AsyncExitStack() as stack:
        for client in clients:
            stack.push_async_callback(client.aclose)
        unhealthy = [client.base_url for client in clients if not await client.health()]
        if unhealthy:
            raise InstanceError(
                f"instance not ready at {', '.join(unhealthy)} (GET /healthz/readiness): start it or fix --base-url",
                method="GET",
                path="/healthz/readiness",
            )
        for client in clients:
            await client.login()
        yield clients
