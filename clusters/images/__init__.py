"""Offline container images: a debootstrapped base and the node images built FROM it."""
