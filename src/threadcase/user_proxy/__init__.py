"""user_proxy."""
