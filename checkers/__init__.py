"""ordeal: checkers."""
