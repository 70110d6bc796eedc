"""The `ordeal` commands: one module per command family (main.py puts them together)."""
