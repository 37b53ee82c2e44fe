"""Keep secrets out of error messages and logs.

Error excerpts quote a response body so a failure can be diagnosed from the report alone; bodies
can echo what we sent (credential data, a password on a bad login) or carry tokens. Redaction
works on two levels: JSON bodies are walked and the values of secret-looking keys replaced
(including the whole ``data`` of anything shaped like a credential), then the text is scrubbed of
every secret value the redactor was told about (the login password, ``EVAL_*`` tokens) and of
token-shaped strings.
"""

from __future__ import annotations

import json
import re
from collections.abc import Iterable, Mapping
from typing import Any

__all__ = ["REDACTED", "Redactor", "environment_secrets"]

REDACTED = "[redacted]"

_SECRET_PARTS = ("password", "passwd", "secret", "apikey", "accesstoken", "refreshtoken", "privatekey", "authorization")
_SECRET_EXACT = frozenset({"cookie", "token"})


def _secret_key(key: str) -> bool:
    # camelCase, snake_case and kebab-case spellings of the same key compare equal.
    # ``accessToken`` is a secret, ``tokenCount`` is not.
    norm = key.replace("_", "").replace("-", "").lower()
    return norm in _SECRET_EXACT or norm.endswith("token") or any(part in norm for part in _SECRET_PARTS)


# Token shapes worth scrubbing even when we were never told the value: provider API keys and
# bearer headers. Deliberately narrow so ids and ordinary words survive.
_TOKEN_SHAPES = re.compile(
    r"(?:\bsk-[A-Za-z0-9_\-]{8,})|(?:\bxox[abposr]-[A-Za-z0-9\-]{8,})|(?:\bgh[pousr]_[A-Za-z0-9]{16,})"
    r"|(?:(?<=Bearer )[A-Za-z0-9._~+/\-]{8,}=*)|(?:\bn8n-auth=[^;\s\"]+)"
)
# Values too short to scrub safely (they would shred ordinary words in the excerpt).
_MIN_SECRET_LEN = 4


def environment_secrets(environ: Mapping[str, str]) -> list[str]:
    """The values of every ``EVAL_*`` variable: real provider tokens when set."""
    return [value for key, value in environ.items() if key.startswith("EVAL_") and value]


class Redactor:
    """Scrubs known secret values, secret-looking keys and token shapes from text."""

    def __init__(self, secrets: Iterable[str] = ()) -> None:
        self._secrets: set[str] = set()
        for secret in secrets:
            self.add(secret)

    def add(self, secret: str | None) -> None:
        """Remember one more value that must never appear in output."""
        if secret and len(secret) >= _MIN_SECRET_LEN:
            self._secrets.add(secret)

    def text(self, value: str) -> str:
        """Scrub a string: known values first (longest first, so a prefix never leaks), then shapes."""
        for secret in sorted(self._secrets, key=len, reverse=True):
            value = value.replace(secret, REDACTED)
        return _TOKEN_SHAPES.sub(REDACTED, value)

    def data(self, value: Any) -> Any:
        """A copy of a JSON value with secret keys and credential ``data`` replaced."""
        if isinstance(value, Mapping):
            credential_shaped = "type" in value and ("name" in value or "id" in value)
            out: dict[str, Any] = {}
            for key, item in value.items():
                secret = isinstance(key, str) and _secret_key(key)
                if secret or (key == "data" and credential_shaped and item is not None):
                    out[key] = REDACTED
                else:
                    out[key] = self.data(item)
            return out
        if isinstance(value, list):
            return [self.data(item) for item in value]
        if isinstance(value, str):
            return self.text(value)
        return value

    def excerpt(self, body: str | bytes, limit: int = 300) -> str:
        """A short, redacted, single-line excerpt of a response body."""
        raw = body.decode("utf-8", "replace") if isinstance(body, bytes) else body
        try:
            parsed = json.loads(raw)
        except ValueError:
            cleaned = self.text(raw)
        else:
            cleaned = json.dumps(self.data(parsed), ensure_ascii=False, separators=(",", ":"))
        cleaned = " ".join(cleaned.split())
        return cleaned if len(cleaned) <= limit else cleaned[: limit - 1] + "…"
