"""The one redaction step: every string threadcase writes out passes through a :class:`Redactor`.

Outputs are the console, log lines, the journal (and through it ``summary.json``, ``junit.xml`` and
``report.html``, which are rebuilt from the journal), replay exports and every error message. A
redactor replaces, wherever they appear:

- every **configured secret value** it was told about — the instance password, ``EVAL_*`` tokens, API
  keys and any other variable named like a secret (:func:`secret_values`), the password in a URL's
  userinfo — in its raw form and as JSON and HTML would escape it (a journal line is JSON);
- the value of an **Authorization / Cookie / API-key header**, however it is quoted (an HTTP error
  body that echoes the request's headers as a Python dict, a ``Set-Cookie`` line, a JSON object);
- a **credential by its syntax** nobody declared (a bearer or basic credential, the n8n session cookie),
  and — in text a server wrote, such as an error body (``provider_keys=True``) — anything shaped like a
  provider's key (``sk-...``, ``xoxb-...``, ``ghp_...``, LangSmith keys, JWTs);
- the **userinfo of any URL** (``https://user:pw@host`` → ``https://host``): URLs are stored without it.

It also makes the text encodable: a lone UTF-16 surrogate (an escaped ``"\\udfff"`` in a case file or
an instance's answer) becomes U+FFFD, so writing a line can never fail half way through a run.

Everything is one regular-expression pass per string (a match is rare; the scan is in C), so the
journal can run every line through it.
"""

from __future__ import annotations

import html
import json
import re
from collections.abc import Iterable, Mapping
from typing import Any
from urllib.parse import unquote, urlsplit, urlunsplit

__all__ = [
    "REDACTED",
    "Redactor",
    "environment_secrets",
    "replace_surrogates",
    "secret_values",
    "strip_userinfo",
]

REDACTED = "[redacted]"

MIN_SECRET_LENGTH = 4
"""Shorter values are not scrubbed: they would shred ordinary words of every report."""

_SECRET_KEY_PARTS = (
    "password",
    "passwd",
    "secret",
    "apikey",
    "accesstoken",
    "refreshtoken",
    "privatekey",
    "authorization",
)
_SECRET_KEY_EXACT = frozenset({"cookie", "token", "setcookie"})

_SECRET_VARIABLE = re.compile(
    r"(?:^|_)(?:API_?KEY|TOKEN|SECRET|PASSWORD|PASSWD|PRIVATE_KEY|ACCESS_KEY|AUTH)(?:_|$)", re.IGNORECASE
)
"""Environment variable names whose value is a secret (``OPENAI_API_KEY``, ``LANGSMITH_API_KEY_EU``,
``THREADCASE_PASSWORD``, ``GITHUB_TOKEN``...). ``EVAL_*`` variables are secrets whatever their name."""
_URL_VARIABLE = re.compile(r"(?:URL|ENDPOINT|URI|HOST|PROXY)(?:_|$)", re.IGNORECASE)
"""Variables holding a URL whose userinfo (``https://user:pw@host``) is a secret."""
_NOT_SECRET_VARIABLES = frozenset({"PWD", "OLDPWD"})

# Token shapes worth scrubbing even when we were never told the value, each behind a literal that
# must be in the text for the shape to be looked for at all: most text holds none of them, and a plain
# substring test is two orders of magnitude cheaper than a regular-expression scan. Deliberately narrow
# so ids and ordinary words survive; every pattern starts at a fixed prefix, so each scan is linear.
_Shapes = tuple[tuple[tuple[str, ...], re.Pattern[str]], ...]


def _shapes(*patterns: tuple[tuple[str, ...], str]) -> _Shapes:
    return tuple((triggers, re.compile(pattern)) for triggers, pattern in patterns)


_CREDENTIAL_SYNTAX = _shapes(
    (("earer ", "EARER "), r"(?<=[Bb]earer )[A-Za-z0-9._~+/\-]{8,}=*|(?<=BEARER )[A-Za-z0-9._~+/\-]{8,}=*"),
    (("asic ", "ASIC "), r"(?<=[Bb]asic )[A-Za-z0-9+/]{8,}=*|(?<=BASIC )[A-Za-z0-9+/]{8,}=*"),
    (("n8n-auth=",), r"n8n-auth=[^;\s\"'\\,]+"),
)
"""A credential by its syntax (a bearer or basic credential, the n8n session cookie): always scrubbed."""
_PROVIDER_KEYS = _shapes(
    (("sk-",), r"sk-(?<![A-Za-z0-9]sk-)[A-Za-z0-9_\-]{8,}"),
    (("xox",), r"xox(?<![A-Za-z0-9]xox)[abposr]-[A-Za-z0-9\-]{8,}"),
    (("gh",), r"gh(?<![A-Za-z0-9]gh)[pousr]_[A-Za-z0-9]{16,}"),
    (("github_pat_",), r"github_pat_[A-Za-z0-9_]{16,}"),
    (("ls",), r"ls(?<![A-Za-z0-9]ls)(?:v2)?_(?:pt|sk)_[A-Za-z0-9_]{16,}"),
    (("AKIA",), r"AKIA(?<![A-Za-z0-9]AKIA)[0-9A-Z]{16}(?![0-9A-Z])"),
    (("eyJ",), r"eyJ(?<![A-Za-z0-9]eyJ)[A-Za-z0-9_\-]{8,}\.[A-Za-z0-9_\-]{8,}\.[A-Za-z0-9_\-]{8,}"),
)
"""A provider's key by its shape, for text a third party wrote (an error body): not for a run's whole
output, where a case's own made-up token (a rule case asking the agent to hard-code ``sk-live-...``) is
the evidence a report must show."""
_HEADER_WORDS = ("authorization", "cookie", "api-key", "api_key", "apikey")
_HEADER = re.compile(
    r"(?P<hname>(?i:(?:proxy-)?authorization|set-cookie|cookie|x-api-key|x-n8n-api-key|api[-_]?key))"
    r"(?P<hsep>\\?[\"']?\s{0,3}[:=]\s{0,3}\\?[\"']?)"
    r"(?P<hval>[^\"'\\\s,;}\[\]][^\"'\\\n\r,}\]]*)"
)
"""A header and its value, in the spellings an error body or a log line uses (``Authorization: ...``,
``'authorization': '...'``, ``"Cookie":"..."``); the value ends at a quote, a comma or a bracket, and
one that starts with a bracket is already ``[redacted]``."""
_USERINFO = re.compile(r"(?P<scheme>[A-Za-z][A-Za-z0-9+.\-]{0,30}://)(?P<userinfo>[^/?#@\s\"'<>\\]{1,512}@)")
_SURROGATE = re.compile(r"[\ud800-\udfff]")


def _secret_key(key: str) -> bool:
    # camelCase, snake_case and kebab-case spellings of the same key compare equal.
    # ``accessToken`` is a secret, ``tokenCount`` is not.
    norm = key.replace("_", "").replace("-", "").lower()
    return norm in _SECRET_KEY_EXACT or norm.endswith("token") or any(part in norm for part in _SECRET_KEY_PARTS)


def strip_userinfo(url: str) -> str:
    """``url`` without its userinfo (``https://user:pw@host/x`` → ``https://host/x``); other text unchanged."""
    try:
        parts = urlsplit(url)
    except ValueError:
        return url
    if "@" not in parts.netloc:
        return url
    return urlunsplit(parts._replace(netloc=parts.netloc.rpartition("@")[2]))


def _userinfo_secrets(url: str) -> list[str]:
    """The password of a URL's userinfo (raw and percent-decoded), and the userinfo as a whole.

    The user name alone is no secret, and as one it would be replaced wherever the word appears
    (a user called ``lane`` would shred every ``"lane"`` of a journal).
    """
    try:
        parts = urlsplit(url.strip())
    except ValueError:
        return []
    if "@" not in parts.netloc:
        return []
    userinfo = parts.netloc.rpartition("@")[0]
    _, colon, password = userinfo.partition(":")
    found = [userinfo, password, unquote(password)] if colon else [userinfo]
    return [value for value in found if value]


def replace_surrogates(text: str) -> str:
    """``text`` with every lone UTF-16 surrogate replaced by U+FFFD, so it can be encoded as UTF-8."""
    if text.isascii() or not _SURROGATE.search(text):
        return text
    return _SURROGATE.sub("\ufffd", text)


def environment_secrets(environ: Mapping[str, str]) -> list[str]:
    """The values of every ``EVAL_*`` variable: real provider tokens when set."""
    return [value for key, value in environ.items() if key.startswith("EVAL_") and value]


def secret_values(environ: Mapping[str, str]) -> list[str]:
    """Every secret an environment configures: ``EVAL_*`` values, variables named like a secret
    (``*_API_KEY``, ``*_TOKEN``, ``*PASSWORD*``, ``*_SECRET``...) and the userinfo of URL variables."""
    found = environment_secrets(environ)
    for key, value in environ.items():
        if not value or key in _NOT_SECRET_VARIABLES:
            continue
        if _SECRET_VARIABLE.search(key):
            found.append(value)
        if _URL_VARIABLE.search(key) or "://" in value:
            for part in value.split(","):
                found += _userinfo_secrets(part)
    return found


class Redactor:
    """Scrubs known secret values, secret-looking headers and keys, token shapes and URL userinfo.

    One per run (the runner builds it from the settings and the environment, the CLI from its flags);
    :meth:`add` teaches it one more value, e.g. a credential token created mid-run.
    """

    def __init__(self, secrets: Iterable[str | None] = (), *, provider_keys: bool = False) -> None:
        """``provider_keys``: also scrub strings shaped like a provider's API key nobody declared
        (``sk-...``, ``xoxb-...``, ``ghp_...``): for excerpts of bodies a server wrote."""
        self._shapes = _CREDENTIAL_SYNTAX + _PROVIDER_KEYS if provider_keys else _CREDENTIAL_SYNTAX
        self._secrets: set[str] = set()
        self._ordered: list[str] | None = None
        for secret in secrets:
            self.add(secret)

    @classmethod
    def from_environment(cls, environ: Mapping[str, str], extra: Iterable[str | None] = ()) -> Redactor:
        """A redactor that knows every secret of ``environ`` (see :func:`secret_values`) and ``extra``."""
        return cls([*secret_values(environ), *extra])

    def add(self, secret: str | None) -> None:
        """Remember one more value that must never appear in output (too short ones are ignored)."""
        if not secret or len(secret) < MIN_SECRET_LENGTH:
            return
        forms = {secret, json.dumps(secret)[1:-1], json.dumps(secret, ensure_ascii=False)[1:-1]}
        forms |= {html.escape(form) for form in list(forms)}
        new = {form for form in forms if len(form) >= MIN_SECRET_LENGTH} - self._secrets
        if new:
            self._secrets |= new
            self._ordered = None

    def add_url(self, url: str | None) -> None:
        """Remember the userinfo (user name, password) of ``url``, if it has one."""
        for secret in _userinfo_secrets(url or ""):
            self.add(secret)

    def update(self, other: Redactor) -> None:
        """Learn every secret ``other`` knows."""
        new = other._secrets - self._secrets
        if new:
            self._secrets |= new
            self._ordered = None

    def knows(self, value: str) -> bool:
        """Whether ``value`` is one of the secrets this redactor replaces."""
        return value in self._secrets

    def text(self, value: str) -> str:
        """``value`` with every secret, header value, token shape and URL userinfo replaced."""
        if self._ordered is None:
            # Longest first: a secret that is a prefix of another must not leave the other's tail behind.
            self._ordered = sorted(self._secrets, key=len, reverse=True)
        for secret in self._ordered:
            if secret in value:
                value = value.replace(secret, REDACTED)
        if not value.isascii() and _SURROGATE.search(value):
            value = _SURROGATE.sub("\ufffd", value)
        if "@" in value and "://" in value:
            value = _USERINFO.sub(r"\g<scheme>", value)
        low = value.lower()
        if any(word in low for word in _HEADER_WORDS):
            value = _HEADER.sub(r"\g<hname>\g<hsep>" + REDACTED, value)
        for triggers, pattern in self._shapes:
            if any(trigger in value for trigger in triggers):
                value = pattern.sub(REDACTED, value)
        return value

    def json_values(self, value: Any) -> Any:
        """A copy of a JSON value with every string value passed through :meth:`text`.

        Keys are left as they are (only made encodable): the shape of the document never changes, even
        when a secret happens to equal a key's name.
        """
        if isinstance(value, dict):
            return {replace_surrogates(k) if isinstance(k, str) else k: self.json_values(v) for k, v in value.items()}
        if isinstance(value, list):
            return [self.json_values(item) for item in value]
        if isinstance(value, str):
            return self.text(value)
        return value

    def data(self, value: Any) -> Any:
        """A copy of a JSON value with secret keys and credential ``data`` replaced, strings scrubbed."""
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
        except (ValueError, RecursionError):
            cleaned = self.text(raw)
        else:
            cleaned = json.dumps(self.data(parsed), ensure_ascii=False, separators=(",", ":"))
        cleaned = " ".join(cleaned.split())
        return cleaned if len(cleaned) <= limit else cleaned[: limit - 1] + "…"
