"""Removing a run's containers, networks and volumes, by label."""
from __future__ import annotations

import logging

import docker

from clusters import labels as L

log = logging.getLogger("ordeal.cluster")


def remove_run(client: docker.DockerClient, run: str) -> None:
    """Remove everything labelled with this run; idempotent, and never stops half-way."""
    flt = {"label": [f"{L.PROJECT}=ordeal", f"{L.RUN}={run}"]}
    for c in client.containers.list(all=True, filters=flt):
        try:
            c.remove(force=True)
        except docker.errors.NotFound:
            pass
    for n in client.networks.list(filters=flt):
        try:
            n.remove()
        except docker.errors.NotFound:
            pass
    for v in client.volumes.list(filters=flt):
        try:
            v.remove(force=True)
        except docker.errors.NotFound:
            pass


def _runs(client: docker.DockerClient) -> dict[str, dict[str, str]]:
    """Every run with any object left, with the labels of one of its objects."""
    flt = {"label": [f"{L.PROJECT}=ordeal"]}
    runs: dict[str, dict[str, str]] = {}
    for obj in [*client.networks.list(filters=flt), *client.containers.list(all=True, filters=flt),
                *client.volumes.list(filters=flt)]:
        lbl = (obj.attrs.get("Labels") if hasattr(obj, "attrs") else None) or getattr(obj, "labels", {}) or {}
        if L.RUN in lbl:
            runs.setdefault(lbl[L.RUN], lbl)
    return runs


def prune_leftovers(client: docker.DockerClient) -> list[str]:
    """Remove the runs whose owner process is gone (crashed or killed); returns their labels."""
    pruned = []
    for run, lbl in _runs(client).items():
        if not L.owner_alive(lbl):
            log.info("pruning leftovers of crashed run %s", run)
            remove_run(client, run)
            pruned.append(run)
    return pruned


def remove_all(client: docker.DockerClient) -> list[str]:
    """`ordeal clean`: every run, kept or live, is removed."""
    runs = list(_runs(client))
    for run in runs:
        remove_run(client, run)
    return runs
