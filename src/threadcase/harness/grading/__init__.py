"""harness/grading."""
