"""harness/instance."""
