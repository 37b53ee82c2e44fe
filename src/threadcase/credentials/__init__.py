"""Declared credential sets: templates, create, pin, bypass, delete."""

from threadcase.credentials.seeder import CredentialSeeder, SeededCredential
from threadcase.credentials.templates import PLACEHOLDER_TOKEN, SUPPORTED_CREDENTIAL_TYPES, TEMPLATES

__all__ = ["PLACEHOLDER_TOKEN", "SUPPORTED_CREDENTIAL_TYPES", "TEMPLATES", "CredentialSeeder", "SeededCredential"]
