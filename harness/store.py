"""Where runs are kept: store/<scenario>/<UTC timestamp>/ holding run.json, scenario.json
(the resolved scenario), history.jsonl, logs/ (node logs), results.json and report.html;
store/latest points at the newest run (ducktape's results directory)."""
from __future__ import annotations

import json
import os
from datetime import datetime
from pathlib import Path
from typing import Any

from ground.run_files import LATEST


def create_run_dir(store: Path, scenario: str, started: datetime) -> Path:
    """A new, empty directory for one run; a second run in the same second gets a suffix."""
    base = Path(store) / scenario
    base.mkdir(parents=True, exist_ok=True)
    stamp = started.strftime("%Y%m%dT%H%M%SZ")
    for n in range(1000):
        path = base / (stamp if n == 0 else f"{stamp}-{n}")
        try:
            path.mkdir()
            return path
        except FileExistsError:
            continue
    raise FileExistsError(f"{base}/{stamp}: too many runs in one second")


def point_latest(store: Path, run_dir: Path) -> None:
    """store/latest -> the run (relative, so the store can be moved); replaced atomically."""
    link = Path(store) / LATEST
    tmp = link.with_name(f".{LATEST}.{os.getpid()}")
    tmp.unlink(missing_ok=True)
    tmp.symlink_to(os.path.relpath(run_dir, link.parent))
    os.replace(tmp, link)


def write_json(path: Path, data: Any) -> None:
    tmp = path.with_name(f".{path.name}.tmp")
    tmp.write_text(json.dumps(data, indent=2, default=str) + "\n")
    os.replace(tmp, path)

