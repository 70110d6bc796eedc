"""A node of the cluster under test: one container, with ducktape's verbs.

Faults reach nodes only through these verbs and through the node's network namespace
(`pid`), so another backend (remote docker, SSH to VMs) can provide the same class.
"""
from __future__ import annotations

import time
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Literal

import docker
from docker.models.containers import Container

from clusters import labels as L

Role = Literal["zookeeper", "controller", "kafka", "osn", "toxiproxy"]
# The order nodes are listed (and started) in.
ROLES: tuple[Role, ...] = ("toxiproxy", "zookeeper", "controller", "kafka", "osn")


class NodeVerbFailed(RuntimeError):
    """A verb the Docker engine could not carry out after bounded retries (not a verdict)."""


@dataclass
class Node:
    name: str
    role: Role
    ip: str
    container: Container = field(repr=False)
    # A stop the harness meant (kill, stop) until the next start: harness.crash_watch reports
    # any other exit as a crash. Set before the signal, cleared after the start.
    expected_down: bool = field(default=False, repr=False, compare=False)

    @property
    def node_id(self) -> int:
        """broker.id / ZooKeeper myid / OSN ordinal: the digits at the end of the name."""
        return int("".join(ch for ch in self.name if ch.isdigit()) or 0)

    def _reload(self) -> dict:
        self.container.reload()
        return self.container.attrs["State"]

    @property
    def state(self) -> str:
        """Docker's status: running, paused, exited, created, ... (or missing)."""
        try:
            return self._reload()["Status"]
        except docker.errors.NotFound:
            return "missing"

    @property
    def pid(self) -> int:
        """Host pid of the node's main process; 0 when it is not running."""
        return int(self._reload().get("Pid") or 0)

    def alive(self) -> bool:
        return self.state in ("running", "paused")

    def start(self) -> None:
        if self.state == "paused":
            self.container.unpause()
        elif self.state != "running":
            self.container.start()
        self.expected_down = False

    def _intend_down(self) -> None:
        # Only a live node: one that already exited by itself stays a crash.
        if self.state in ("running", "paused"):
            self.expected_down = True

    def kill(self) -> None:
        """SIGKILL: no shutdown hooks, no flush; the data volume keeps what reached it."""
        self._intend_down()
        if self.state == "paused":
            self.container.unpause()
        if self.state == "running":
            self.container.kill(signal="SIGKILL")
            self.container.wait(timeout=30)

    def stop(self, clean_shutdown: bool = True) -> None:
        if not clean_shutdown:
            self.kill()
            return
        self._intend_down()
        if self.state == "paused":
            self.container.unpause()
        if self.state == "running":
            self.container.stop(timeout=20)

    def pause(self, attempts: int = 8) -> None:
        """Freeze every process in the node (cgroup freezer).

        Under load the cgroup-v1 freezer can fail to settle in runc's short window ("unable
        to freeze": runc thaws again and gives up), most often with a JVM's hundreds of
        threads. That is the harness's trouble, not the system's, so the freeze is retried a
        bounded number of times; if it never settles, NodeVerbFailed says so in one line.
        """
        last: Exception | None = None
        for attempt in range(attempts):
            if self.state != "running":
                return
            try:
                self.container.pause()
                return
            except docker.errors.APIError as exc:
                if "freeze" not in str(exc):
                    raise
                last = exc
                time.sleep(0.25 * (attempt + 1))
        raise NodeVerbFailed(f"could not pause {self.name} after {attempts} tries: {last}")

    def resume(self) -> None:
        if self.state == "paused":
            self.container.unpause()

    def lose_disk(self) -> dict[str, Any]:
        """Empty every writable volume of a stopped node, as a swapped disk would come back:
        the node's next start finds no log, no ledger, no meta.properties.

        Done by a throwaway container of the node's own image (its user owns the files),
        with no network and the run's labels, so that it works on any Docker engine and a
        crash leaves nothing a start would not prune. Answers what was there, for the history.

        Read-only mounts are not the node's disk and stay: on Fabric's orderer that is the
        run's material (MSP and genesis block, fabric/material_volume.py), so an
        orderer loses its ledger alone, as when its ledger disk is swapped. Emptying the
        MSP too would be another fault: an orderer that cannot start at all.
        """
        if self.alive():
            raise NodeVerbFailed(f"{self.name}: lose_disk needs the node stopped (it is {self.state})")
        volumes = [m for m in self.container.attrs.get("Mounts", []) if m.get("Type") == "volume" and m.get("RW")]
        if not volumes:
            raise NodeVerbFailed(f"{self.name}: no writable volume to lose")
        wiped: dict[str, Any] = {}
        keep = (L.PROJECT, L.RUN, L.VARIANT, L.OWNER_PID, L.OWNER_BOOT, L.KEEP)
        labels = {k: v for k, v in (self.container.labels or {}).items() if k in keep}
        for m in volumes:
            target = m["Destination"]
            # Directories two levels down (Kafka's partition directories, Fabric's chains)
            # and their sizes, then everything below the mount point goes.
            script = (f"cd {target} && du -k --max-depth=2 . 2>/dev/null; "
                      f"find . -mindepth 1 -maxdepth 1 -exec rm -rf -- {{}} + && echo ordeal-wiped")
            out = self.container.client.containers.run(
                self.container.attrs["Config"]["Image"], entrypoint=["/bin/sh", "-c", script], command=[],
                mounts=[docker.types.Mount(target=target, source=m["Name"], type="volume")],
                labels=labels, network_disabled=True, remove=True, stdout=True, stderr=True,
            ).decode(errors="replace").splitlines()
            if "ordeal-wiped" not in out:
                raise NodeVerbFailed(f"{self.name}: could not empty {target}: {' '.join(out)[-200:]}")
            entries, total = {}, 0
            for line in out:
                kib, _, name = line.partition("\t")
                if not kib.isdigit() or not name:
                    continue
                if name == ".":
                    total = int(kib)
                elif name.count("/") == 2:  # ./a/b: the leaves of the listing
                    entries[name[2:]] = int(kib)
            wiped[target] = {"volume": m["Name"], "kib": total, "entries": dict(sorted(entries.items())[:200])}
        return wiped

    def read_file(self, path: str) -> bytes | None:
        """A file of the node's own filesystem as its process sees it (through the host's
        /proc/<pid>/root, so a paused node answers too); None when the node is not running
        or the file is absent. The harness runs on the Docker host, as its partitions do."""
        pid = self.pid
        if not pid:
            return None
        try:
            return Path(f"/proc/{pid}/root{path}").read_bytes()
        except OSError:
            return None

    def exit_state(self) -> dict[str, Any] | None:
        """Docker's State of the container (Status, ExitCode, OOMKilled, FinishedAt, ...), asked
        through the container's own client, so bound by its timeout; None once the container
        is gone (removed: no crash, but the run's cluster is lost)."""
        try:
            return self.container.client.api.inspect_container(self.container.id)["State"]
        except docker.errors.NotFound:
            return None

    def log_tail(self, lines: int) -> list[str]:
        """The last `lines` lines of the container's log (stdout and stderr), as text."""
        raw = self.container.client.api.logs(self.container.id, stdout=True, stderr=True, tail=lines)
        text = raw.decode("utf-8", errors="replace") if isinstance(raw, bytes) else str(raw)
        return text.splitlines()[-lines:]

    def logs(self) -> bytes:
        return self.container.logs(stdout=True, stderr=True)

    def save_logs(self, directory: Path) -> Path:
        directory.mkdir(parents=True, exist_ok=True)
        path = directory / f"{self.name}.log"
        path.write_bytes(self.logs())
        return path

    def to_dict(self) -> dict:
        return {"name": self.name, "role": self.role, "ip": self.ip, "state": self.state}
