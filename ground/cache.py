"""ordeal's cache directory: images' inputs, Fabric's tools, the class archives, the Spark
Connect servers' state."""
from __future__ import annotations

import os
from pathlib import Path


def cache_dir() -> Path:
    """ordeal's cache, as clusters/bootstrap.sh sets it ($ORDEAL_CACHE, or ~/.cache/ordeal).
    The one place Python reads it, so that a boot finds what the bootstrap built."""
    return Path(os.environ.get("ORDEAL_CACHE") or Path.home() / ".cache" / "ordeal")
