"""`ordeal cluster ...` and `ordeal clean`: the cluster on its own, without a scenario."""
from __future__ import annotations

import argparse
import json
import signal
import sys
import threading
import time
from pathlib import Path

from ground.errors import UsageError


def docker_client():
    import docker

    try:
        client = docker.from_env(timeout=120)
        client.ping()
    except Exception as exc:  # the engine is missing or not started
        from clusters.errors import engine_unreachable

        raise UsageError(engine_unreachable(exc)) from None
    return client


def _variant(name: str):
    from ground.variant import VariantError, load_variant

    try:
        return load_variant(name)
    except VariantError as exc:
        raise UsageError(str(exc)) from None


def _terminate_on_sigterm() -> None:
    """SIGTERM unwinds like SIGINT does, so `finally` blocks tear the cluster down."""
    def handler(signum: int, frame: object) -> None:
        raise SystemExit(128 + signum)

    signal.signal(signal.SIGTERM, handler)


def _up(args: argparse.Namespace) -> int:
    variant = _variant(args.variant)  # refused here, before anything boots
    client = docker_client()
    from clusters.cluster import Cluster
    from clusters.errors import ClusterError

    _terminate_on_sigterm()
    started = time.monotonic()
    try:
        cluster = Cluster.up(variant, run_label=args.label, keep=not args.foreground, cache=args.cache, client=client)
    except ClusterError as exc:
        print(f"ordeal: cluster did not come up: {exc}", file=sys.stderr)
        return 1
    print(f"cluster {cluster.run} ({variant.name}) healthy in {time.monotonic() - started:.1f} s", flush=True)
    print(json.dumps(cluster.status(), indent=2), flush=True)
    if not args.foreground:
        print(f"kept running; `ordeal cluster down --run {cluster.run}` removes it")
        return 0
    try:
        threading.Event().wait()  # until SIGINT / SIGTERM
    finally:
        cluster.down(logs_dir=args.logs)
        print(f"cluster {cluster.run} removed", file=sys.stderr, flush=True)
    return 0


def _status(args: argparse.Namespace) -> int:
    from clusters.cluster import Cluster

    cluster = Cluster.attach(args.variant, run=args.run, client=docker_client())
    if cluster is None:
        print("no running ordeal cluster" + (f" for {args.run or args.variant}" if args.run or args.variant else ""),
              file=sys.stderr)
        return 1
    status = cluster.status()
    if args.json:
        print(json.dumps(status, indent=2))
    else:
        print(f"run {status['run']}  variant {status['variant']}  subnet {status['subnet']}")
        print(f"bootstrap servers (host clients): {status['bootstrap_servers']}")
        for n in status["nodes"]:
            print(f"  {n['name']:10} {n['role']:10} {n['ip']:15} {n['state']}")
    return 0


def _down(args: argparse.Namespace) -> int:
    from clusters.cluster import Cluster

    client = docker_client()
    removed = 0
    while (cluster := Cluster.attach(args.variant, run=args.run, client=client)) is not None:
        cluster.down(logs_dir=args.logs)
        print(f"removed cluster {cluster.run}")
        removed += 1
    if not removed:
        print("no running ordeal cluster to remove", file=sys.stderr)
    return 0


def _smoke(args: argparse.Namespace) -> int:
    variant = _variant(args.variant)
    client = docker_client()
    from clusters.cluster import Cluster
    from clusters.errors import ClusterError
    from clusters.smoke import smoke

    _terminate_on_sigterm()
    started = time.monotonic()
    try:
        cluster = Cluster.up(variant, cache=args.cache, client=client)
    except ClusterError as exc:
        print(f"ordeal: cluster did not come up: {exc}", file=sys.stderr)
        return 1
    try:
        booted = time.monotonic() - started
        quorum = (f"{len(cluster.controllers)} KRaft controller" if cluster.kraft
                  else f"{len(cluster.zookeepers)} ZooKeeper")
        print(f"{variant.name}: {quorum} + {len(cluster.brokers)} Kafka {variant.kafka.version} + "
              f"{len(cluster.osns)} OSN nodes healthy in {booted:.1f} s", flush=True)
        result = smoke(cluster, messages=args.messages)
        print(result.summary())
        ok = result.acknowledged == result.read_back == result.produced and result.in_order
    finally:
        cluster.down(logs_dir=args.logs)
    print("torn down; nothing left behind" if ok else "SMOKE FAILED")
    return 0 if ok else 1


def register(sub: argparse._SubParsersAction) -> None:
    cluster = sub.add_parser("cluster", help="boot, inspect and remove a cluster on its own",
                             description="Manage a ZooKeeper + Kafka (+ OSN) cluster without running a scenario.")
    csub = cluster.add_subparsers(dest="cluster_command", metavar="ACTION", required=True)

    up = csub.add_parser("up", help="boot a variant and wait until healthy",
                         description="Boot a variant. Without --foreground the cluster is kept running until "
                                     "`ordeal cluster down`; with it, SIGINT/SIGTERM tears it down.")
    up.add_argument("--variant", default="fabric-recommended", help="variant name or TOML path")
    up.add_argument("--label", help="run label (default: variant plus a random suffix)")
    up.add_argument("--foreground", action="store_true", help="stay attached; tear down on SIGINT/SIGTERM")
    up.add_argument("--logs", type=Path, help="with --foreground: save node logs here at teardown")
    up.add_argument("--cache", type=Path, help="artifact and image cache (default $ORDEAL_CACHE or ~/.cache/ordeal)")
    up.set_defaults(func=_up)

    st = csub.add_parser("status", help="nodes, addresses and states of a running cluster")
    st.add_argument("--variant", help="only a cluster of this variant")
    st.add_argument("--run", help="only this run label")
    st.add_argument("--json", action="store_true", help="machine-readable: nodes and bootstrap servers")
    st.set_defaults(func=_status)

    down = csub.add_parser("down", help="remove running clusters (all, or one variant/run)")
    down.add_argument("--variant")
    down.add_argument("--run")
    down.add_argument("--logs", type=Path, help="save node logs here first")
    down.set_defaults(func=_down)

    sm = csub.add_parser("smoke", help="boot, produce and consume (surviving a broker SIGKILL), tear down")
    sm.add_argument("--variant", default="fabric-recommended")
    sm.add_argument("--messages", type=int, default=1000)
    sm.add_argument("--logs", type=Path, help="save node logs here at teardown")
    sm.add_argument("--cache", type=Path, help="as for up")
    sm.set_defaults(func=_smoke)

