"""Benchmarks: scripts that print their figures on their last line."""
