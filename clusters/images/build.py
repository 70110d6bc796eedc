"""Build every node image offline, each tagged by a hash of its inputs, so a second build
with nothing changed does nothing."""
from __future__ import annotations

import argparse
import os
import shutil
import sys
import tempfile
import time
from dataclasses import dataclass
from pathlib import Path

import docker

from clusters.images import artifacts, fabric_build
from clusters.images.base import build_base
from ground.cache import cache_dir, exclusive

IMAGES_DIR = Path(__file__).resolve().parent
OSN_DIR = IMAGES_DIR.parents[1] / "osn"  # the model OSN: all of it, and nothing else, goes into its image


@dataclass(frozen=True)
class ImageTags:
    base: str
    jvm_libs: dict[str, str]  # per Kafka version
    zookeeper: str
    kafka: dict[str, str]  # per Kafka version: brokers and KRaft controllers run from it
    toxiproxy: str
    osn: str | None
    fabric_orderer: str | None

    def kafka_image(self, version: str) -> str:
        return self.kafka[version]


def shipped_kafka_versions() -> list[str]:
    """The Kafka versions of the shipped variants: what the bootstrap builds ahead."""
    from ground.variant import VARIANTS_DIR, load_variant

    return sorted({load_variant(str(p)).kafka.version for p in VARIANTS_DIR.glob("*.toml")})


def _files_digest(root: Path) -> list[bytes]:
    return [
        p.relative_to(root).as_posix().encode() + b"\0" + p.read_bytes()
        for p in sorted(root.rglob("*"))
        if p.is_file() and "__pycache__" not in p.parts and p.suffix != ".pyc"
    ]


def _build(client: docker.DockerClient, repository: str, base: str, recipe: Path,
           extra: dict[str, Path], key: list[bytes | str]) -> str:
    """docker build of `recipe` (a folder with a Dockerfile) FROM `base`, with `extra`
    files or folders copied into the context."""
    tag = f"{repository}:{artifacts.digest(base, *_files_digest(recipe), *key)}"
    if client.images.list(name=tag):
        return tag
    with exclusive(_lock_file(tag), f"the image {tag}"):
        if not client.images.list(name=tag):  # another process may have built it meanwhile
            _build_context(client, tag, base, recipe, extra)
    _drop_stale_tags(client, repository, keep=tag)
    return tag


def _lock_file(tag: str) -> Path:
    """One lock per image tag, so that two runs needing the same image build it once."""
    return cache_dir() / "locks" / (tag.replace("/", "_").replace(":", "@") + ".lock")


def _build_context(client: docker.DockerClient, tag: str, base: str, recipe: Path, extra: dict[str, Path]) -> None:
    with tempfile.TemporaryDirectory(prefix="ordeal-build-") as ctx:
        ctx_path = Path(ctx)
        shutil.copytree(recipe, ctx_path, dirs_exist_ok=True)
        for name, src in extra.items():
            dst = ctx_path / name
            if src.is_dir():
                shutil.copytree(src, dst, ignore=shutil.ignore_patterns("__pycache__", "*.pyc", ".complete"))
            else:
                shutil.copy2(src, dst)
        client.images.build(path=ctx, tag=tag, buildargs={"BASE": base}, rm=True, forcerm=True, network_mode="none")


def _drop_stale_tags(client: docker.DockerClient, repository: str, keep: str) -> None:
    """Images of older inputs are dead cache; remove them unless a container still uses them,
    or a scratch build beside the real one asks to keep them (ORDEAL_KEEP_IMAGES, `make newest`)."""
    if os.environ.get("ORDEAL_KEEP_IMAGES"):
        return
    for image in client.images.list(name=repository):
        for old in image.tags:
            if old != keep and old.startswith(repository + ":"):
                try:
                    client.images.remove(old)
                except docker.errors.APIError:
                    pass


def _osn_context(dst: Path, osn_dir: Path = OSN_DIR) -> Path:
    """The model OSN's tree as its image holds it. Its generated wire/ (gitignored, made by the
    bootstrap) must be there and current: an image without it has nodes that die at import, and
    since every build drops the repository's other tags, building it would also remove the good
    image (a second checkout of ordeal without wire/, such as a git worktree, did just that)."""
    from clusters.errors import ClusterError
    from clusters.images import protos

    if protos.stale(osn_dir / "wire"):
        raise ClusterError(f"{osn_dir / 'wire'} is missing or stale: `make bootstrap` generates it from Fabric's "
                           ".proto files before the OSN image is built")
    shutil.copytree(osn_dir, dst / "osn", ignore=shutil.ignore_patterns("__pycache__", "*.pyc"))
    return dst


def build_fabric_orderer(client: docker.DockerClient, cache: Path, base: str, namespace: str = "ordeal",
                         timings: dict[str, float] | None = None) -> str:
    """Fabric v1.4.12's orderer (built on the host by fabric_build.fabric_tools) with its
    sampleconfig as FABRIC_CFG_PATH; tagged by the tools' cache key (their inputs)."""
    started = time.monotonic()
    tools = fabric_build.fabric_tools(cache)
    built = time.monotonic()
    tag = _build(client, f"{namespace}/fabric-orderer", base, IMAGES_DIR / "fabric",
                 {"orderer": tools / "bin" / "orderer", "sampleconfig": tools / "sampleconfig"},
                 [fabric_build.FABRIC_VERSION, tools.name])
    if timings is not None:
        timings["fabric-tools"] = built - started
        timings["fabric-orderer image"] = time.monotonic() - built
    return tag


def build_fabric_orderer_2_5(client: docker.DockerClient, cache: Path, base: str, patches: tuple[str, ...] = (),
                             namespace: str = "ordeal") -> str:
    """Fabric 2.5.16's orderer, built on first use (fabric_build.fabric_tools_2_5), patched or
    not: each patch set is an image repository of its own (named by a digest of the patch
    paths; its tag is the tools' key), so a patched and a released build stand side by side."""
    tools = fabric_build.fabric_tools_2_5(cache, patches)
    repository = (f"{namespace}/fabric-orderer-{fabric_build.FABRIC_2_5}"
                  + (f"-patched-{artifacts.digest(*patches)[:8]}" if patches else ""))
    return _build(client, repository, base, IMAGES_DIR / "fabric",
                  {"orderer": tools / "bin" / "orderer", "sampleconfig": tools / "sampleconfig"},
                  [fabric_build.FABRIC_2_5, tools.name])


def build_kafka(client: docker.DockerClient, cache: Path, base: str, version: str,
                namespace: str = "ordeal") -> tuple[str, str]:
    """The jvm-libs and kafka images of one Kafka version, each in a repository of its own
    (ordeal/kafka-4.4.0), so that dropping stale tags of one version never touches another."""
    libs = artifacts.kafka_libs(cache, version)
    jvm = _build(client, f"{namespace}/jvm-libs-{version}", base, IMAGES_DIR / "jvm-libs", {"libs": libs},
                 [version])
    kafka = _build(client, f"{namespace}/kafka-{version}", jvm, IMAGES_DIR / "kafka", {}, [])
    return jvm, kafka


def build_all(cache: Path, client: docker.DockerClient | None = None, namespace: str = "ordeal",
              timings: dict[str, float] | None = None, kafka_versions: list[str] | None = None) -> ImageTags:
    """Every image, from `cache`'s artifacts; `namespace` prefixes the repositories (a
    benchmark builds a cold set beside the real one under another namespace). Kafka images
    are built for `kafka_versions` (default: every shipped variant's). `timings`, if given,
    receives the seconds spent on the Fabric parts."""
    from ground.kafka_versions import ZOOKEEPER_LIBS_VERSION

    client = client or docker.from_env(timeout=600)
    base = build_base(client, cache / "work", namespace)
    jvm: dict[str, str] = {}
    kafka: dict[str, str] = {}
    for version in sorted({ZOOKEEPER_LIBS_VERSION, *(kafka_versions or shipped_kafka_versions())}):
        jvm[version], kafka[version] = build_kafka(client, cache, base, version, namespace)
    zookeeper = _build(client, f"{namespace}/zookeeper", jvm[ZOOKEEPER_LIBS_VERSION], IMAGES_DIR / "zookeeper",
                       {}, [])
    toxiproxy = _build(client, f"{namespace}/toxiproxy", base, IMAGES_DIR / "toxiproxy",
                       {"toxiproxy-server": artifacts.toxiproxy_server(cache)}, [artifacts.TOXIPROXY_VERSION])
    osn = None
    if (OSN_DIR / "server.py").exists():
        wheels = artifacts.osn_wheels(cache)
        with tempfile.TemporaryDirectory(prefix="ordeal-osn-src-") as src:
            tree = _osn_context(Path(src) / "ordeal")
            osn = _build(client, f"{namespace}/osn", base, IMAGES_DIR / "osn", {"wheels": wheels, "ordeal": tree},
                         [*_files_digest(tree), *_files_digest(wheels)])
    fabric_orderer = build_fabric_orderer(client, cache, base, namespace, timings)
    return ImageTags(base=base, jvm_libs=jvm, zookeeper=zookeeper, kafka=kafka, toxiproxy=toxiproxy, osn=osn,
                     fabric_orderer=fabric_orderer)


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="python -m clusters.images.build",
                                     description="Build ordeal's node images offline (cached by input hash).")
    parser.add_argument("--cache", type=Path, required=True, help="artifact cache directory")
    args = parser.parse_args(argv)
    started = time.monotonic()
    tags = build_all(args.cache)
    for field, tag in vars(tags).items():
        for version, one in (tag.items() if isinstance(tag, dict) else [("", tag)]):
            print(f"{field:14} {one}" + (f"  (Kafka {version})" if version else ""))
    print(f"images ready in {time.monotonic() - started:.1f} s")
    return 0


if __name__ == "__main__":
    sys.exit(main())
