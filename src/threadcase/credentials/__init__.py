"""Declared credential sets: templates, create, pin, bypass, delete."""

from threadcase.case.credential_templates import PLACEHOLDER_TOKEN, SUPPORTED_CREDENTIAL_TYPES, TEMPLATES
from threadcase.credentials.seeder import CredentialSeeder, SeededCredential

__all__ = ["PLACEHOLDER_TOKEN", "SUPPORTED_CREDENTIAL_TYPES", "TEMPLATES", "CredentialSeeder", "SeededCredential"]
