"""The base root filesystem: `debootstrap --variant=minbase` from this machine's own apt
mirror, then `docker import`. No container registry is involved.

Pinned: the suite (this machine's own Debian release) and the package names. Not pinned: their
versions, which are the suite's current ones on the day the image is built; the image is then
kept (its tag is the suite and the names), and the versions it got are listed in the cache's
work folder as `<tag>.packages`."""
from __future__ import annotations

import shutil
import subprocess
import tempfile
from pathlib import Path

import docker

from clusters.images.apt_mirror import debian_mirror
from clusters.images.artifacts import digest
from ground.cache import exclusive

# A headless JRE for ZooKeeper and Kafka, python3 (+venv) for the OSN, iproute2 and procps
# so a person can look around inside a node.
PACKAGES = ("openjdk-17-jre-headless", "python3", "python3-venv", "iproute2", "procps")


def base_tag(namespace: str = "ordeal") -> str:
    _, suite = debian_mirror()
    return f"{namespace}/base:{digest(suite, *PACKAGES)}"


def build_base(client: docker.DockerClient, workdir: Path, namespace: str = "ordeal") -> str:
    """Build and import the base image unless an image with the same inputs exists."""
    tag = base_tag(namespace)
    if client.images.list(name=tag):
        return tag
    with exclusive(workdir / "base.lock", f"the base image {tag}"):
        if not client.images.list(name=tag):  # another process may have built it meanwhile
            _debootstrap(client, workdir, tag)
    return tag


def _debootstrap(client: docker.DockerClient, workdir: Path, tag: str) -> None:
    mirror, suite = debian_mirror()
    workdir.mkdir(parents=True, exist_ok=True)
    root = Path(tempfile.mkdtemp(prefix="rootfs-", dir=workdir))
    try:
        subprocess.run(
            ["debootstrap", "--variant=minbase", f"--include={','.join(PACKAGES)}", suite, str(root), mirror],
            check=True, stdout=subprocess.DEVNULL,
        )
        # apt caches are not needed at run time.
        shutil.rmtree(root / "var/cache/apt/archives", ignore_errors=True)
        # Debian's versions are not pinned (a mirror serves only its suite's current ones, which
        # change at point releases and security updates); what this image got is kept beside it.
        listing = subprocess.run(["dpkg-query", f"--admindir={root}/var/lib/dpkg", "-W",
                                  "-f", "${Package}=${Version}\n"], check=True, capture_output=True, text=True)
        (workdir / f"{tag.split(':')[1]}.packages").write_text(listing.stdout)
        tarball = workdir / "rootfs.tar"
        subprocess.run(["tar", "-C", str(root), "-cf", str(tarball), "."], check=True)
        repo, version = tag.split(":")
        client.api.import_image_from_file(str(tarball), repository=repo, tag=version)
        tarball.unlink()
    finally:
        shutil.rmtree(root, ignore_errors=True)
