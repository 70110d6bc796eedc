"""ordeal: nemesis."""
