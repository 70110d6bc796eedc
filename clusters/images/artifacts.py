"""Host-side artifacts the images are built from, each fetched once through its registry's
ordinary client and cached under a key made of its inputs."""
from __future__ import annotations

import hashlib
import os
import subprocess
from pathlib import Path

from clusters.images import pylock
from ground.cache import built_once

IMAGES_DIR = Path(__file__).resolve().parent
JVM_LIBS_DIR = IMAGES_DIR / "jvm-libs"
TOXIPROXY_MODULE = "github.com/Shopify/toxiproxy/v2/cmd/server"
TOXIPROXY_VERSION = "v2.12.0"
# The Go toolchain every Go build of ordeal's uses (toxiproxy, Fabric's tools), exactly: a
# machine whose own Go differs takes this one from the Go module proxy (golang.org/toolchain).
GO_TOOLCHAIN = "go1.26.8"


def go_env(**extra: str) -> dict[str, str]:
    """The environment of a Go build: the pinned toolchain (modules are checked against go.sum)."""
    return dict(os.environ, GOTOOLCHAIN=GO_TOOLCHAIN, **extra)


def digest(*parts: bytes | str) -> str:
    h = hashlib.sha256()
    for p in parts:
        h.update(p.encode() if isinstance(p, str) else p)
        h.update(b"\0")
    return h.hexdigest()[:12]


def kafka_pom(version: str) -> Path:
    """The pom that resolves `version`'s runtime classpath (one per major: their logging differs)."""
    from ground import kafka_versions

    return JVM_LIBS_DIR / f"pom-{kafka_versions.parse(version)[0]}.xml"


def kafka_libs(cache: Path, version: str) -> Path:
    """Kafka `version`'s runtime jars (3.9's with ZooKeeper 3.8), resolved by Maven."""
    pom = kafka_pom(version)

    def resolve(out: Path) -> None:
        subprocess.run(
            ["mvn", "-q", "-B", "-f", str(pom), f"-Dkafka.version={version}", "dependency:copy-dependencies",
             f"-DoutputDirectory={out}", "-DincludeScope=runtime"],
            check=True,
        )
        if not any(out.glob(f"kafka_2.13-{version}.jar")):
            raise RuntimeError(f"maven did not deliver the jars of Kafka {version} into {out}")

    return built_once(cache / "kafka-libs" / digest(pom.read_bytes(), version), resolve, f"Kafka {version}'s jars")


def toxiproxy_server(cache: Path) -> Path:
    """A static toxiproxy v2 server binary, built by `go install` from the Go module proxy
    (its module's own go.sum pins what it builds from)."""
    def install(out: Path) -> None:
        subprocess.run(["go", "install", f"{TOXIPROXY_MODULE}@{TOXIPROXY_VERSION}"], check=True,
                       env=go_env(CGO_ENABLED="0", GOBIN=str(out)))
        (out / "server").rename(out / "toxiproxy-server")

    final = cache / "toxiproxy" / digest(TOXIPROXY_VERSION, GO_TOOLCHAIN)
    return built_once(final, install, f"toxiproxy {TOXIPROXY_VERSION}") / "toxiproxy-server"


def osn_wheels(cache: Path, python: str = "3.11") -> Path:
    """Wheels for the OSN's runtime, downloaded on the host for the image's CPython: the OSN's
    part of requirements.lock, each file checked against the lock's hashes."""
    requirements = pylock.osn_requirements()

    def download(out: Path) -> None:
        (out / "requirements.txt").write_text(requirements)
        subprocess.run(
            ["python3", "-m", "pip", "download", "-q", "--only-binary=:all:", "--python-version", python,
             "--platform", "manylinux2014_x86_64", "--platform", "manylinux_2_17_x86_64",
             "--platform", "manylinux_2_28_x86_64", "--platform", "any", "--require-hashes", "--no-deps",
             "-r", str(out / "requirements.txt"), "-d", str(out)],
            check=True,
        )

    return built_once(cache / "osn-wheels" / digest(requirements, python), download, "the OSN's wheels")
