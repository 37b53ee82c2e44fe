"""Tests of the demo instance (platform and agent)."""
