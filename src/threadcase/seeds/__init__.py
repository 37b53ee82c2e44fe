"""seeds."""
