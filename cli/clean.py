"""`ordeal clean`: everything ordeal left running, whichever part started it: the clusters'
containers, networks and volumes (clusters/prune.py) and this user's Spark Connect check
servers (checkers/runtime/connect.py)."""
from __future__ import annotations

import argparse

from checkers.runtime.connect import stop_all
from cli.cluster import docker_client


def _clean(args: argparse.Namespace) -> int:
    from clusters.prune import remove_all  # here: every other command's start would load the Docker SDK

    runs = remove_all(docker_client())
    print(f"removed {len(runs)} run(s)" + (": " + ", ".join(runs) if runs else ""))
    servers = stop_all()
    print(f"stopped {len(servers)} Spark Connect check server(s)")
    return 0


def register(sub: argparse._SubParsersAction) -> None:
    clean = sub.add_parser("clean", help="remove every ordeal container, network and volume; stop check servers",
                           description="Remove every object labelled by ordeal, kept or live runs included, and "
                                       "stop this user's check servers (`ordeal check`'s warm JVMs).")
    clean.set_defaults(func=_clean)
