"""The runner and everything that is not seeding, simulating users or credentials."""
