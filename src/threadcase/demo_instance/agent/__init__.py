"""demo_instance/agent."""
