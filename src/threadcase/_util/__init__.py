"""Small internal helpers shared across the package."""
