"""demo_instance."""
