"""A mistake the user can fix, as opposed to a bug of ordeal's: the command line prints its
message as one line and exits 2 (cli/main.py), whichever part raised it."""
from __future__ import annotations


class UsageError(Exception):
    """A mistake the user can fix; printed as one line, exit 2."""
