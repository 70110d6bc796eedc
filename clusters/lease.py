"""One run at a time on a kept cluster: a lease.

A run that boots its cluster owns it (the owner labels name its process) and no other run
may attach to it. A cluster kept idle (`ordeal cluster up`) is shared one run at a time: a
run takes the lease, a container named after the cluster that is created and never
started. Docker refuses a second container of the same name, so taking a lease is atomic;
the lease's labels name the process that holds it, so a lease left by a killed process is
seen to be stale and taken over. Removing the cluster removes its lease with it.
"""
from __future__ import annotations

import docker

from clusters import labels as L


def lease_name(run: str) -> str:
    return f"ordeal-{run}-lease"


def take(client: docker.DockerClient, run: str, variant: str, image: str) -> bool:
    """Take the lease of `run` for this process; False when a live process holds it."""
    for _ in range(2):
        try:
            client.containers.create(image, command=["true"], name=lease_name(run), network_disabled=True,
                                     labels={**L.run_labels(run, variant, keep=False), L.ROLE: "lease"})
            return True
        except docker.errors.APIError as exc:
            if exc.status_code != 409:  # 409: the name is taken, by a lease
                raise
        try:
            held = client.containers.get(lease_name(run))
        except docker.errors.NotFound:
            continue  # released between our try and our look: try again
        if L.owner_alive(held.labels):
            return False
        try:
            held.remove(force=True)  # its holder is gone: a stale lease
        except docker.errors.NotFound:
            pass
    return False


def release(client: docker.DockerClient, run: str) -> None:
    """Give the lease back (only this process's own)."""
    try:
        held = client.containers.get(lease_name(run))
    except docker.errors.NotFound:
        return
    if held.labels.get(L.OWNER_PID) == str(L.run_labels(run, "", False)[L.OWNER_PID]):
        try:
            held.remove(force=True)
        except docker.errors.NotFound:
            pass
