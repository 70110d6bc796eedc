"""ordeal: workloads."""
