"""ordeal: harness."""
