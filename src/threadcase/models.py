"""Model configuration for the user proxy and the judge (an OpenAI-compatible chat API).

``OPENAI_API_KEY`` / ``OPENAI_BASE_URL`` and ``THREADCASE_PROXY_MODEL`` / ``THREADCASE_JUDGE_MODEL``
configure them. With no model configured the proxy runs scripted and model-graded expectations are
not judged. The key is a ``SecretStr``: it never appears in a repr, a log line or a report.
"""

from __future__ import annotations

import os
from collections.abc import Mapping
from typing import TYPE_CHECKING

from pydantic import BaseModel, ConfigDict, SecretStr

if TYPE_CHECKING:
    import openai

__all__ = ["ModelSettings"]


class ModelSettings(BaseModel):
    """Which models to call, and how to reach them."""

    model_config = ConfigDict(frozen=True, extra="forbid")

    api_key: SecretStr | None = None
    base_url: str | None = None
    proxy_model: str | None = None
    """The user proxy's model; None = scripted proxy (no model calls)."""
    judge_model: str | None = None
    """The judge's and the scenario verifier's model; None = model-graded units not judged."""
    timeout_seconds: float = 120.0
    max_attempts: int = 2

    @classmethod
    def from_env(cls, environ: Mapping[str, str] | None = None) -> ModelSettings:
        env = os.environ if environ is None else environ
        key = env.get("OPENAI_API_KEY") or None
        return cls(
            api_key=SecretStr(key) if key else None,
            base_url=env.get("OPENAI_BASE_URL") or None,
            proxy_model=env.get("THREADCASE_PROXY_MODEL") or None,
            judge_model=env.get("THREADCASE_JUDGE_MODEL") or None,
        )

    @property
    def proxy_enabled(self) -> bool:
        return self.proxy_model is not None

    @property
    def judge_enabled(self) -> bool:
        return self.judge_model is not None

    def client(self) -> openai.AsyncOpenAI:
        """A fresh SDK client; the caller closes it (``async with``). Retries are ours, not the SDK's."""
        import openai  # the SDK is heavy to import, and most runs (scripted, no judge) never need it

        return openai.AsyncOpenAI(
            api_key=self.api_key.get_secret_value() if self.api_key else "not-set",
            base_url=self.base_url,
            timeout=self.timeout_seconds,
            max_retries=0,
        )
