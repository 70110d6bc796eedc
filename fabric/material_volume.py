"""The network material lives in one Docker volume of the run, mounted read-only into every
orderer: removed with the run like its other volumes, and readable again by a later process
that attaches to a kept cluster (for the client's identities)."""
from __future__ import annotations

import io
import tarfile
import tempfile
from pathlib import Path

import docker

# The orderer runs as this unprivileged user inside its image (clusters/images/fabric/Dockerfile).
ORDERER_UID = 1000
MOUNT = "/etc/hyperledger/ordeal"


def volume_name(run: str) -> str:
    return f"ordeal-{run}-fabric-material"


def _tar_of(root: Path) -> bytes:
    buf = io.BytesIO()

    def owned(info: tarfile.TarInfo) -> tarfile.TarInfo:
        info.uid = info.gid = ORDERER_UID
        info.uname = info.gname = ""
        return info

    with tarfile.open(fileobj=buf, mode="w") as tar:
        for path in sorted(root.iterdir()):
            tar.add(path, arcname=path.name, filter=owned)
    return buf.getvalue()


def _scratch(client: docker.DockerClient, image: str, volume: str, labels: dict[str, str]):
    """A container that is never started: only there to reach the volume with put/get_archive."""
    return client.containers.create(image, command=["true"], labels=labels, network_disabled=True,
                                    mounts=[docker.types.Mount(target=MOUNT, source=volume, type="volume")])


def store(client: docker.DockerClient, image: str, run: str, labels: dict[str, str], root: Path) -> str:
    """Create the run's material volume holding `root`'s files (owned by the orderer's user)."""
    name = volume_name(run)
    client.volumes.create(name=name, labels=labels)
    scratch = _scratch(client, image, name, labels)
    try:
        if not scratch.put_archive(MOUNT, _tar_of(root)):
            raise RuntimeError(f"could not copy the Fabric material into volume {name}")
    finally:
        scratch.remove(force=True)
    return name


def fetch(client: docker.DockerClient, image: str, run: str, labels: dict[str, str], part: str, into: Path) -> Path:
    """Copy `part` (a path inside the material, e.g. "clients") out of the run's volume into `into`."""
    scratch = _scratch(client, image, volume_name(run), labels)
    try:
        stream, _ = scratch.get_archive(f"{MOUNT}/{part}")
        with tempfile.TemporaryFile() as tmp:
            for chunk in stream:
                tmp.write(chunk)
            tmp.seek(0)
            with tarfile.open(fileobj=tmp) as tar:
                tar.extractall(into, filter="data")
    finally:
        scratch.remove(force=True)
    return into / Path(part).name
