"""Credential templates: the one list of credential types a case may declare.

Each template knows its default name, the ``EVAL_*`` environment variable that may carry a real token,
and how to build the credential's data from a token. Without the variable the token is the
placeholder ``eval-placeholder``. Adding a template is the one way to support a new type: the case
schema validates ``credentials[].type`` against :data:`SUPPORTED_CREDENTIAL_TYPES`.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping
from dataclasses import dataclass
from typing import Any

__all__ = ["PLACEHOLDER_TOKEN", "SUPPORTED_CREDENTIAL_TYPES", "TEMPLATES", "CredentialTemplate"]

PLACEHOLDER_TOKEN = "eval-placeholder"


@dataclass(frozen=True)
class CredentialTemplate:
    """How to create one credential type for an eval."""

    type: str
    default_name: str
    env_var: str | None
    build_data: Callable[[str], dict[str, Any]]

    def token(self, environ: Mapping[str, str]) -> str:
        """The real token from the environment when set, else the placeholder."""
        if self.env_var and environ.get(self.env_var):
            return environ[self.env_var]
        return PLACEHOLDER_TOKEN

    def data(self, environ: Mapping[str, str], *, working: bool = True) -> dict[str, Any]:
        """The credential's data: the real token when ``working`` and its variable is set, else the placeholder.

        A credential meant to fail (``working=False``) never gets the real token, or its connection
        test would pass against the provider and the case would test nothing.
        """
        return self.build_data(self.token(environ) if working else PLACEHOLDER_TOKEN)


def _oauth(token: str) -> dict[str, Any]:
    return {"oauthTokenData": {"access_token": token}}


_TEMPLATE_LIST = [
    CredentialTemplate("slackApi", "[eval] Slack", "EVAL_SLACK_ACCESS_TOKEN", lambda t: {"accessToken": t}),
    CredentialTemplate("notionApi", "[eval] Notion", "EVAL_NOTION_API_KEY", lambda t: {"apiKey": t}),
    CredentialTemplate("githubApi", "[eval] GitHub", "EVAL_GITHUB_ACCESS_TOKEN", lambda t: {"accessToken": t}),
    CredentialTemplate("gmailOAuth2", "[eval] Gmail", "EVAL_GMAIL_ACCESS_TOKEN", _oauth),
    CredentialTemplate("googleDriveOAuth2Api", "[eval] Google Drive", "EVAL_GOOGLE_DRIVE_ACCESS_TOKEN", _oauth),
    CredentialTemplate("googleSheetsOAuth2Api", "[eval] Google Sheets", "EVAL_GOOGLE_SHEETS_ACCESS_TOKEN", _oauth),
    CredentialTemplate(
        "microsoftTeamsOAuth2Api",
        "[eval] Microsoft Teams",
        "EVAL_TEAMS_ACCESS_TOKEN",
        lambda t: {"scope": "openid", **_oauth(t)},
    ),
    CredentialTemplate(
        "whatsAppTriggerApi",
        "[eval] WhatsApp",
        None,
        lambda _t: {"clientId": "eval-client-id", "clientSecret": "eval-client-secret"},
    ),
    CredentialTemplate(
        "googlePalmApi",
        "[eval] Google Gemini",
        "EVAL_GEMINI_API_KEY",
        lambda t: {"host": "https://generativelanguage.googleapis.com", "apiKey": t},
    ),
    CredentialTemplate(
        "httpHeaderAuth",
        "[eval] Header Auth",
        None,
        lambda t: {"name": "Authorization", "value": f"Bearer {t}"},
    ),
    CredentialTemplate("httpBearerAuth", "[eval] Bearer Auth", None, lambda t: {"token": t}),
    CredentialTemplate(
        "httpBasicAuth", "[eval] Basic Auth", None, lambda _t: {"user": "eval-user", "password": "eval-pass"}
    ),
    CredentialTemplate("openAiApi", "[eval] OpenAI", "EVAL_OPENAI_API_KEY", lambda t: {"apiKey": t}),
]

TEMPLATES: Mapping[str, CredentialTemplate] = {t.type: t for t in _TEMPLATE_LIST}

SUPPORTED_CREDENTIAL_TYPES: frozenset[str] = frozenset(TEMPLATES)
