"""Client CPU per HTTP request: the lean HTTP/1.1 transport vs httpx's default transport.

Serves the demo instance in its own process (as ``bench.concurrency`` does) and sends sequential
requests on one kept-alive connection, straight to each transport as ``InstanceClient`` does for plain
calls (``handle_async_request``, read the whole body, close): ``GET /healthz/readiness`` and a JSON
``POST /rest/instance-ai/threads`` with the session cookie. Prints, per transport and request kind,
the client's CPU milliseconds per request (``time.process_time``; the server's CPU is not counted),
best of ``--rounds`` rounds so a busy moment of the shared machine does not count. The last line is
the ratio new/default over all requests.

Run: ``python -m bench.http_request [--requests 2000] [--rounds 3]``.
"""

from __future__ import annotations

import argparse
import json
import time
import uuid
from typing import Any

import httpx

from bench.concurrency import demo_process
from threadcase._util.loop import run as run_loop
from threadcase.demo_instance.settings import DEFAULT_EMAIL, DEFAULT_PASSWORD
from threadcase.instance.http11 import HTTP11Transport

TIMEOUT = httpx.Timeout(30.0).as_dict()
LIMITS = httpx.Limits(max_connections=256, max_keepalive_connections=64)


def _transports() -> dict[str, httpx.AsyncBaseTransport]:
    return {
        "http11": HTTP11Transport(LIMITS),
        "httpx-default": httpx.AsyncHTTPTransport(limits=LIMITS),
    }


async def _exchange(transport: httpx.AsyncBaseTransport, request: httpx.Request) -> httpx.Response:
    response = await transport.handle_async_request(request)
    try:
        await response.aread()
    finally:
        await response.aclose()
    return response


async def _cookie(url: str) -> str:
    async with httpx.AsyncClient(base_url=url) as client:
        response = await client.post(
            "/rest/login", json={"emailOrLdapLoginId": DEFAULT_EMAIL, "password": DEFAULT_PASSWORD}
        )
        response.raise_for_status()
        return f"n8n-auth={client.cookies['n8n-auth']}"


def _requests(url: str, cookie: str, kind: str, count: int) -> list[httpx.Request]:
    headers = {"Accept": "application/json", "User-Agent": "threadcase", "Cookie": cookie}
    ext: dict[str, Any] = {"timeout": TIMEOUT}
    if kind == "GET":
        return [httpx.Request("GET", url + "/healthz/readiness", headers=headers, extensions=ext) for _ in range(count)]
    return [
        httpx.Request(
            "POST",
            url + "/rest/instance-ai/threads",
            json={"threadId": str(uuid.uuid4()), "projectId": None},
            headers=headers,
            extensions=ext,
        )
        for _ in range(count)
    ]


async def measure(url: str, count: int, rounds: int) -> dict[str, dict[str, float]]:
    cookie = await _cookie(url)
    results: dict[str, dict[str, float]] = {}
    for name, transport in _transports().items():
        per_kind: dict[str, float] = {}
        try:
            for kind in ("GET", "POST"):
                best = float("inf")
                for _ in range(rounds):
                    # Built beforehand: the request objects are the caller's cost, not the transport's.
                    requests = _requests(url, cookie, kind, count)
                    await _exchange(transport, requests[0])  # warm: the connection is open and pooled
                    started = time.process_time()
                    for request in requests[1:]:
                        response = await _exchange(transport, request)
                        if response.status_code >= 500:
                            raise RuntimeError(f"{kind} answered {response.status_code}: {response.text[:200]}")
                    best = min(best, (time.process_time() - started) / (count - 1))
                per_kind[kind] = best * 1000
        finally:
            await transport.aclose()
        results[name] = per_kind
    return results


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0] if __doc__ else None)
    parser.add_argument("--requests", type=int, default=2000)
    parser.add_argument("--rounds", type=int, default=3)
    args = parser.parse_args()
    with demo_process(0) as (url, _pid):
        results = run_loop(measure, url, args.requests, args.rounds)
    for name, per_kind in results.items():
        print(f"{name}: " + " ".join(f"{kind}_cpu_ms={ms:.3f}" for kind, ms in per_kind.items()))
    new = sum(results["http11"].values())
    old = sum(results["httpx-default"].values())
    print(json.dumps(results))
    print(f"ratio={new / old:.3f} http11_ms={new / 2:.3f} default_ms={old / 2:.3f}")


if __name__ == "__main__":
    main()
