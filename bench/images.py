"""Image build times, cold and warm.

cold: a fresh artifact cache and empty Maven, Go and pip caches (so jars, the toxiproxy
server, wheels and Fabric's modules come from their registries again, and Fabric's
orderer, configtxgen and cryptogen are compiled from scratch) and images under a separate
namespace (so the real images and any running cluster are untouched; removed at the end);
warm: the same build again, with nothing changed.
The Fabric part (fabric_tools: the Go build; the fabric-orderer image) is also shown alone,
and every figure beside the reference loop (bench/reference.py) timed in the same run.
    .venv/bin/python bench/images.py
"""
from __future__ import annotations

import argparse
import os
import shutil
import tempfile
import time
from pathlib import Path

import docker

from clusters.images.build import ImageTags, build_all
from reference import reference_seconds  # bench/reference.py: scripts run with bench/ first on their path

NAMESPACE = "ordeal-bench"


def _tag_names(tags: ImageTags) -> list[str]:
    """Every image tag built: per-version tags are dicts of their own."""
    names: list[str] = []
    for value in vars(tags).values():
        names.extend(value.values() if isinstance(value, dict) else [value] if value else [])
    return names


def main() -> None:
    argparse.ArgumentParser(description=__doc__.splitlines()[0], epilog="Takes no options.").parse_args()
    ref = reference_seconds()
    print(f"reference loop: {ref:.2f} CPU s (this machine's speed now; lower is faster)", flush=True)
    client = docker.from_env(timeout=900)
    scratch = Path(tempfile.mkdtemp(prefix="ordeal-bench-images-"))
    os.environ.update(
        MAVEN_OPTS=f"-Dmaven.repo.local={scratch / 'm2'}",
        GOMODCACHE=str(scratch / "gomod"), GOCACHE=str(scratch / "gocache"),
        PIP_NO_CACHE_DIR="1",
    )
    try:
        fabric: dict[str, float] = {}
        t = time.monotonic()
        tags = build_all(scratch / "cache", client, namespace=NAMESPACE, timings=fabric)
        cold = time.monotonic() - t
        print(f"cold build  {cold:6.1f} s = {cold / ref:5.0f} ref  ({', '.join(_tag_names(tags))})")
        print(f"  of which fabric  {_fabric_line(fabric)}")
        t = time.monotonic()
        build_all(scratch / "cache", client, namespace=NAMESPACE, timings=fabric)
        warm = time.monotonic() - t
        print(f"warm build  {warm:6.1f} s = {warm / ref:5.0f} ref  (nothing rebuilt)")
        print(f"  of which fabric  {_fabric_line(fabric)}")
        print(f"warm/cold {warm / cold:.4f}")
    finally:
        for image in client.images.list():
            for tag in image.tags:
                if tag.startswith(NAMESPACE + "/"):
                    try:
                        client.images.remove(tag, force=True)
                    except docker.errors.APIError:
                        pass
        subprocess_safe_rmtree(scratch)


def _fabric_line(timings: dict[str, float]) -> str:
    total = sum(timings.values())
    return f"{total:6.1f} s  ({', '.join(f'{k} {v:.1f} s' for k, v in timings.items())})"


def subprocess_safe_rmtree(path: Path) -> None:
    # Go's module cache is read-only on disk; make it writable before removing.
    for root, dirs, _ in os.walk(path):
        for d in dirs:
            try:
                os.chmod(os.path.join(root, d), 0o755)
            except OSError:
                pass
    shutil.rmtree(path, ignore_errors=True)


if __name__ == "__main__":
    main()
