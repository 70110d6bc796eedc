"""Host-side artifacts the images are built from, each fetched once through its registry's
ordinary client and cached under a key made of its inputs."""
from __future__ import annotations

import hashlib
import os
import shutil
import subprocess
from pathlib import Path

IMAGES_DIR = Path(__file__).resolve().parent
JVM_LIBS_DIR = IMAGES_DIR / "jvm-libs"
TOXIPROXY_MODULE = "github.com/Shopify/toxiproxy/v2/cmd/server"
TOXIPROXY_VERSION = "v2.12.0"
OSN_REQUIREMENTS = IMAGES_DIR.parent / "orderer" / "requirements.txt"


def digest(*parts: bytes | str) -> str:
    h = hashlib.sha256()
    for p in parts:
        h.update(p.encode() if isinstance(p, str) else p)
        h.update(b"\0")
    return h.hexdigest()[:12]


def _complete(path: Path) -> bool:
    return (path / ".complete").exists()


def _fresh(final: Path) -> Path:
    """An empty working folder beside `final`; it becomes `final` only once complete."""
    tmp = final.with_name(final.name + ".tmp")
    shutil.rmtree(tmp, ignore_errors=True)
    tmp.mkdir(parents=True)
    return tmp


def _finish(tmp: Path, final: Path) -> Path:
    (tmp / ".complete").touch()
    if final.exists():
        shutil.rmtree(final)
    tmp.rename(final)
    return final


def kafka_pom(version: str) -> Path:
    """The pom that resolves `version`'s runtime classpath (one per major: their logging differs)."""
    from clusters import kafka_versions

    return JVM_LIBS_DIR / f"pom-{kafka_versions.parse(version)[0]}.xml"


def kafka_libs(cache: Path, version: str) -> Path:
    """Kafka `version`'s runtime jars (3.9's with ZooKeeper 3.8), resolved by Maven."""
    pom = kafka_pom(version)
    final = cache / "kafka-libs" / digest(pom.read_bytes(), version)
    if _complete(final):
        return final
    tmp = _fresh(final)
    subprocess.run(
        ["mvn", "-q", "-B", "-f", str(pom), f"-Dkafka.version={version}", "dependency:copy-dependencies",
         f"-DoutputDirectory={tmp}", "-DincludeScope=runtime"],
        check=True,
    )
    if not any(tmp.glob(f"kafka_2.13-{version}.jar")):
        raise RuntimeError(f"maven did not deliver the jars of Kafka {version} into {tmp}")
    return _finish(tmp, final)


def toxiproxy_server(cache: Path) -> Path:
    """A static toxiproxy v2 server binary, built by `go install` from the Go module proxy."""
    final = cache / "toxiproxy" / TOXIPROXY_VERSION
    if _complete(final):
        return final / "toxiproxy-server"
    tmp = _fresh(final)
    env = dict(os.environ, CGO_ENABLED="0", GOBIN=str(tmp))
    subprocess.run(["go", "install", f"{TOXIPROXY_MODULE}@{TOXIPROXY_VERSION}"], check=True, env=env)
    (tmp / "server").rename(tmp / "toxiproxy-server")
    return _finish(tmp, final) / "toxiproxy-server"


def osn_wheels(cache: Path, python: str = "3.11") -> Path:
    """Wheels for the OSN's runtime, downloaded on the host for the image's CPython."""
    final = cache / "osn-wheels" / digest(OSN_REQUIREMENTS.read_bytes(), python)
    if _complete(final):
        return final
    tmp = _fresh(final)
    subprocess.run(
        ["python3", "-m", "pip", "download", "-q", "--only-binary=:all:", "--python-version", python,
         "--platform", "manylinux2014_x86_64", "--platform", "manylinux_2_17_x86_64",
         "--platform", "manylinux_2_28_x86_64", "--platform", "any",
         "-r", str(OSN_REQUIREMENTS), "-d", str(tmp)],
        check=True,
    )
    return _finish(tmp, final)
