"""ordeal: clusters."""
