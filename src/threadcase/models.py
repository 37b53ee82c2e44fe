"""Model configuration for the user proxy, the judge and the scenario verifier (an OpenAI-compatible API).

Three roles call a model: the **user proxy** (the simulated user's decisions), the **judge** (process
and outcome expectations, and calibration) and the **scenario verifier** (execution scenarios; the
judge's model unless ``THREADCASE_VERIFIER_MODEL`` names another). Each role has a model, a timeout per
attempt, a number of attempts, and the sampling settings sent with every request: ``temperature``
(default 0, so a verdict does not hang on a server's default), ``seed`` and ``max_tokens`` (sent only
when set). A setting given for every role (``--model-timeout-seconds``) is overridden by the role's
own (``--judge-timeout-seconds``); :data:`SETTINGS` is the one table of flags and environment twins
that both :meth:`ModelSettings.from_env` and the CLI read.

With no proxy model the proxy runs scripted, and with no judge model model-graded expectations are not
judged. The key is a ``SecretStr``: it never appears in a repr, a log line or a report.
"""

from __future__ import annotations

import os
from collections.abc import Mapping
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING, Literal, get_args

from pydantic import BaseModel, ConfigDict, Field, SecretStr, ValidationError

from threadcase.errors import ConfigError

if TYPE_CHECKING:
    import openai

__all__ = [
    "ROLE_LABELS",
    "SETTINGS",
    "ModelRole",
    "ModelSettings",
    "ModelUsage",
    "Role",
    "RoleOverrides",
    "Setting",
]

Role = Literal["proxy", "judge", "verifier"]
ROLES: tuple[Role, ...] = get_args(Role)
ROLE_LABELS: dict[Role, str] = {"proxy": "user proxy", "judge": "judge", "verifier": "scenario verifier"}


class RoleOverrides(BaseModel):
    """One role's own settings; None = the setting given for every role."""

    model_config = ConfigDict(frozen=True, extra="forbid")

    timeout_seconds: float | None = Field(default=None, gt=0)
    """Longest wait for one attempt's answer."""
    attempts: int | None = Field(default=None, ge=1, le=20)
    """Attempts per call (transient failures and malformed answers are tried again)."""
    temperature: float | None = Field(default=None, ge=0, le=2)
    """Sampling temperature sent with every request."""
    seed: int | None = None
    """Sampling seed sent with every request (servers that take one reproduce their answers)."""
    max_tokens: int | None = Field(default=None, ge=1)
    """Upper bound on the answer's length, sent with every request."""


class ModelRole(BaseModel):
    """How one role calls its model in a run: what the journal and the report header record."""

    model_config = ConfigDict(frozen=True, extra="forbid")

    role: Role
    """``proxy``, ``judge`` or ``verifier``."""
    model: str
    """The model name sent with every request."""
    timeout_seconds: float
    """Longest wait for one attempt's answer."""
    attempts: int
    """Attempts per call."""
    temperature: float | None
    """Sampling temperature sent (None: not sent, the server's default applies)."""
    seed: int | None = None
    """Sampling seed sent (None: not sent)."""
    max_tokens: int | None = None
    """Answer length bound sent (None: not sent)."""
    answers: Literal["live", "recorded", "replayed"] = "live"
    """Where the answers came from: the live model, the live model with every answer recorded
    (``--record-models``), or recorded answers only (``--replay-models``)."""

    @property
    def label(self) -> str:
        return ROLE_LABELS[self.role]

    def timeout_hint(self) -> str:
        """Which settings raise this role's timeout (named in every timeout error)."""
        flag = _ROLE_FLAG[self.role]
        return (
            f"--{flag}-timeout-seconds (THREADCASE_{flag.upper()}_TIMEOUT_SECONDS), or --model-timeout-seconds "
            "(THREADCASE_MODEL_TIMEOUT_SECONDS) for every role"
        )

    def line(self) -> str:
        """``judge qwen (timeout 180 s, 2 attempts, temperature 0, seed 7, max_tokens 1024)``."""
        parts = [f"timeout {self.timeout_seconds:g} s", f"{self.attempts} attempt{'s' if self.attempts != 1 else ''}"]
        parts.append("temperature " + ("server default" if self.temperature is None else f"{self.temperature:g}"))
        if self.seed is not None:
            parts.append(f"seed {self.seed}")
        if self.max_tokens is not None:
            parts.append(f"max_tokens {self.max_tokens}")
        if self.answers != "live":
            parts.append(f"answers {self.answers}")
        return f"{self.label} {self.model} ({', '.join(parts)})"


_ROLE_FLAG: dict[Role, str] = {"proxy": "proxy", "judge": "judge", "verifier": "verifier"}


class ModelUsage(BaseModel):
    """Token usage of one role's model calls within one case-iteration (or a whole run)."""

    model_config = ConfigDict(extra="forbid")

    calls: int = 0
    """Requests that got an answer (retries count; replayed answers count)."""
    input_tokens: int = 0
    """Prompt tokens, cached ones included."""
    cached_input_tokens: int = 0
    """Of the prompt tokens, those the provider served from its cache."""
    output_tokens: int = 0
    """Completion tokens."""

    def add(self, other: ModelUsage) -> ModelUsage:
        """Add ``other`` into this one (returns self, for chaining)."""
        self.calls += other.calls
        self.input_tokens += other.input_tokens
        self.cached_input_tokens += other.cached_input_tokens
        self.output_tokens += other.output_tokens
        return self

    def line(self) -> str:
        """``1200 in (300 cached), 80 out, 3 calls``."""
        calls = f", {self.calls} call{'s' if self.calls != 1 else ''}" if self.calls else ""
        return f"{self.input_tokens} in ({self.cached_input_tokens} cached), {self.output_tokens} out{calls}"


class ModelSettings(BaseModel):
    """Which models to call, how to reach them, and how each role calls its model."""

    model_config = ConfigDict(frozen=True, extra="forbid")

    api_key: SecretStr | None = None
    base_url: str | None = None
    proxy_model: str | None = None
    """The user proxy's model; None = scripted proxy (no model calls)."""
    judge_model: str | None = None
    """The judge's model; None = model-graded units not judged."""
    verifier_model: str | None = None
    """The scenario verifier's model; None = the judge's."""
    timeout_seconds: float = Field(default=120.0, gt=0)
    """Every role's timeout per attempt, unless the role sets its own."""
    max_attempts: int = Field(default=2, ge=1, le=20)
    """Every role's attempts per call, unless the role sets its own."""
    temperature: float | None = Field(default=0.0, ge=0, le=2)
    """Every role's sampling temperature (None: not sent), unless the role sets its own."""
    seed: int | None = None
    """Every role's sampling seed (None: not sent), unless the role sets its own."""
    max_tokens: int | None = Field(default=None, ge=1)
    """Every role's answer length bound (None: not sent), unless the role sets its own."""
    proxy: RoleOverrides = Field(default_factory=RoleOverrides)
    """The user proxy's own settings."""
    judge: RoleOverrides = Field(default_factory=RoleOverrides)
    """The judge's own settings."""
    verifier: RoleOverrides = Field(default_factory=RoleOverrides)
    """The scenario verifier's own settings."""
    record_dir: Path | None = None
    """Store every model answer here (request hash -> answer) while calling the live model."""
    replay_dir: Path | None = None
    """Answer every model call from the answers recorded here; never call the live model."""

    @classmethod
    def from_env(cls, environ: Mapping[str, str] | None = None, **overrides: object) -> ModelSettings:
        """Settings from ``OPENAI_*`` and the ``THREADCASE_*`` variables of :data:`SETTINGS`;
        ``overrides`` (a setting's field path -> value, None = not given) win over the environment.

        A value that does not parse is a :class:`ConfigError` naming the variable.
        """
        env = os.environ if environ is None else environ
        key = env.get("OPENAI_API_KEY") or None
        fields: dict[str, object] = {
            "api_key": SecretStr(key) if key else None,
            "base_url": env.get("OPENAI_BASE_URL") or None,
        }
        roles: dict[str, dict[str, object]] = {role: {} for role in ROLES}
        for setting in SETTINGS:
            given = overrides.get(setting.path)
            if given is None:
                raw = env.get(setting.env, "").strip()
                if not raw:
                    continue
                given = setting.parse(raw, source=setting.env)
            target = roles[setting.role] if setting.role is not None else fields
            target[setting.field] = given
        unknown = set(overrides) - {s.path for s in SETTINGS}
        if unknown:
            raise TypeError(f"unknown model settings {sorted(unknown)}")
        try:
            built = cls.model_validate({**fields, **roles})
        except ValidationError as exc:
            first = exc.errors()[0]
            path = ".".join(str(p) for p in first["loc"])
            named = next((s for s in SETTINGS if s.path == path), None)
            where = f"--{named.flag} ({named.env})" if named is not None else path
            raise ConfigError(f"{where}: {first['msg']} (got {first.get('input')!r})") from None
        if built.record_dir is not None and built.replay_dir is not None:
            raise ConfigError("--record-models and --replay-models exclude each other: record once, then replay")
        if built.replay_dir is not None and not built.replay_dir.is_dir():
            raise ConfigError(
                f"--replay-models {str(built.replay_dir)!r} is not a directory of recorded answers; "
                "record them first with --record-models DIR"
            )
        return built

    @property
    def proxy_enabled(self) -> bool:
        return self.proxy_model is not None

    @property
    def judge_enabled(self) -> bool:
        return self.judge_model is not None

    @property
    def verifier_enabled(self) -> bool:
        return (self.verifier_model or self.judge_model) is not None

    def role(self, role: Role) -> ModelRole | None:
        """How ``role`` calls its model; None when no model is configured for it."""
        names = {"proxy": self.proxy_model, "judge": self.judge_model}
        model = names.get(role, self.verifier_model or self.judge_model)
        if model is None:
            return None
        own: RoleOverrides = getattr(self, role)
        answers: Literal["live", "recorded", "replayed"] = (
            "replayed" if self.replay_dir is not None else "recorded" if self.record_dir is not None else "live"
        )
        return ModelRole(
            role=role,
            model=model,
            timeout_seconds=own.timeout_seconds if own.timeout_seconds is not None else self.timeout_seconds,
            attempts=own.attempts if own.attempts is not None else self.max_attempts,
            temperature=own.temperature if own.temperature is not None else self.temperature,
            seed=own.seed if own.seed is not None else self.seed,
            max_tokens=own.max_tokens if own.max_tokens is not None else self.max_tokens,
            answers=answers,
        )

    def roles(self) -> list[ModelRole]:
        """Every role that has a model, in the order proxy, judge, verifier."""
        return [r for r in (self.role(name) for name in ROLES) if r is not None]

    def client(self, timeout_seconds: float | None = None) -> openai.AsyncOpenAI:
        """A fresh SDK client; the caller closes it (``async with``). Retries are ours, not the SDK's.

        The SDK's own timeout sits a little past ``timeout_seconds`` (ours, per attempt, fires first and
        says which role and setting).
        """
        import openai  # the SDK is heavy to import, and most runs (scripted, no judge) never need it

        return openai.AsyncOpenAI(
            api_key=self.api_key.get_secret_value() if self.api_key else "not-set",
            base_url=self.base_url,
            timeout=(timeout_seconds or self.timeout_seconds) + 5.0,
            max_retries=0,
        )


@dataclass(frozen=True)
class Setting:
    """One model setting: its flag, its environment twin, and where it lands in :class:`ModelSettings`."""

    flag: str
    env: str
    field: str
    kind: type
    help: str
    role: Role | None = None

    @property
    def path(self) -> str:
        """The override key: ``judge_model``, ``timeout_seconds``, ``judge.timeout_seconds``."""
        return f"{self.role}.{self.field}" if self.role is not None else self.field

    def parse(self, raw: str, *, source: str) -> object:
        if self.kind is str or self.kind is Path:
            return self.kind(raw)
        try:
            return self.kind(raw)
        except ValueError:
            noun = "an integer" if self.kind is int else "a number"
            raise ConfigError(f"{source}: {raw!r} is not {noun}") from None


_SHARED = (
    ("timeout-seconds", "timeout_seconds", float, "Timeout per model call attempt, in seconds"),
    ("attempts", "attempts", int, "Attempts per model call"),
    ("temperature", "temperature", float, "Sampling temperature sent with every model request"),
    ("seed", "seed", int, "Sampling seed sent with every model request"),
    ("max-tokens", "max_tokens", int, "Answer length bound sent with every model request"),
)
_SHARED_FIELD = {"attempts": "max_attempts"}


def _settings_table() -> tuple[Setting, ...]:
    table = [
        Setting("proxy-model", "THREADCASE_PROXY_MODEL", "proxy_model", str, "User proxy model (none: scripted user)."),
        Setting("judge-model", "THREADCASE_JUDGE_MODEL", "judge_model", str, "Judge model (none: not judged)."),
        Setting(
            "verifier-model",
            "THREADCASE_VERIFIER_MODEL",
            "verifier_model",
            str,
            "Scenario verifier model. [default: the judge model]",
        ),
        Setting(
            "record-models",
            "THREADCASE_RECORD_MODELS",
            "record_dir",
            Path,
            "Record every model answer into DIR (request hash -> answer).",
        ),
        Setting(
            "replay-models",
            "THREADCASE_REPLAY_MODELS",
            "replay_dir",
            Path,
            "Answer every model call from answers recorded in DIR; never call the live model.",
        ),
    ]
    for flag, field, kind, text in _SHARED:
        table.append(
            Setting(
                f"model-{flag}",
                f"THREADCASE_MODEL_{flag.replace('-', '_').upper()}",
                _SHARED_FIELD.get(field, field),
                kind,
                f"{text}, every role.",
            )
        )
    for role in ROLES:
        for flag, field, kind, text in _SHARED:
            table.append(
                Setting(
                    f"{_ROLE_FLAG[role]}-{flag}",
                    f"THREADCASE_{_ROLE_FLAG[role].upper()}_{flag.replace('-', '_').upper()}",
                    field,
                    kind,
                    f"{text}, {ROLE_LABELS[role]} only.",
                    role=role,
                )
            )
    return tuple(table)


SETTINGS: tuple[Setting, ...] = _settings_table()
"""Every model setting a user can give: one flag and one ``THREADCASE_*`` twin each."""
