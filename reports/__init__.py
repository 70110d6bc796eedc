"""ordeal: reports."""
