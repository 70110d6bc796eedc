"""Hyperledger Fabric v1.4.12 from the Go module proxy: its source (for the .proto files and
sampleconfig) and, built from it, the `orderer`, `configtxgen` and `cryptogen` binaries.

Fabric 1.4 has no go.mod (it used dep); clusters/images/fabric/go.mod pins every project of
its Gopkg.lock, so the build resolves offline-reproducibly through the module proxy, each
module checked against clusters/images/fabric/go.sum.
"""
from __future__ import annotations

import json
import os
import shutil
import subprocess
import sys
import tempfile
from pathlib import Path

from clusters.images import artifacts
from ground.cache import built_once

FABRIC_MODULE = "github.com/hyperledger/fabric"
FABRIC_VERSION = "v1.4.12"
FABRIC_DIR = Path(__file__).resolve().parent / "fabric"
GO_MOD = FABRIC_DIR / "go.mod"
GO_SUM = FABRIC_DIR / "go.sum"
# The binaries built, as (package, name in bin/); the orderer alone goes into the image.
TOOLS = (("./orderer", "orderer"), ("./common/tools/configtxgen", "configtxgen"),
         ("./common/tools/cryptogen", "cryptogen"))
LDFLAGS = f"-X {FABRIC_MODULE}/common/metadata.Version={FABRIC_VERSION.lstrip('v')}"


def _go_env() -> dict[str, str]:
    return artifacts.go_env(GOFLAGS="-mod=mod")


def fabric_source() -> Path:
    """The module's source tree in Go's module cache (read-only), downloaded once."""
    out = subprocess.run(["go", "mod", "download", "-json", f"{FABRIC_MODULE}@{FABRIC_VERSION}"],
                         check=True, capture_output=True, text=True, cwd=tempfile.gettempdir(),
                         env=_go_env())
    info = json.loads(out.stdout)
    if info.get("Error"):
        raise RuntimeError(f"go mod download {FABRIC_MODULE}@{FABRIC_VERSION}: {info['Error']}")
    return Path(info["Dir"])


def _go_version() -> str:
    return subprocess.run(["go", "version"], check=True, capture_output=True, text=True,
                          env=_go_env()).stdout.strip()


def _writable_copy(src: Path, dst: Path, ignore=None) -> None:
    """Copy a tree out of Go's module cache (files 0444, folders 0555) and make it writable."""
    shutil.copytree(src, dst, ignore=ignore)
    for root, dirs, files in os.walk(dst):
        for name in dirs:
            os.chmod(os.path.join(root, name), 0o755)
        for name in files:
            p = os.path.join(root, name)
            os.chmod(p, os.stat(p).st_mode | 0o200)
    os.chmod(dst, 0o755)


def fabric_tools(cache: Path) -> Path:
    """`cache/fabric/<key>/` with bin/{orderer,configtxgen,cryptogen} and sampleconfig/
    (what the binaries look for under FABRIC_CFG_PATH), built once per go.mod, go.sum,
    Fabric version and Go toolchain. The build's output is shown only if it fails."""
    key = artifacts.digest(GO_MOD.read_bytes(), GO_SUM.read_bytes(), FABRIC_VERSION, _go_version(),
                           LDFLAGS, *(pkg for pkg, _ in TOOLS))
    return built_once(cache / "fabric" / key, _build_tools, f"Fabric {FABRIC_VERSION}'s tools")


def _build_tools(tmp: Path) -> None:
    source = fabric_source()
    with tempfile.TemporaryDirectory(prefix="ordeal-fabric-src-") as work:
        src = Path(work) / "fabric"
        _writable_copy(source, src, ignore=shutil.ignore_patterns("docs", ".git"))
        shutil.copy(GO_MOD, src / "go.mod")
        shutil.copy(GO_SUM, src / "go.sum")
        (tmp / "bin").mkdir()
        # -trimpath: the temporary source folder leaves no trace in the binaries, and Go's
        # build cache still hits when the same source is built again from another folder.
        cmd = ["go", "build", "-trimpath", "-buildvcs=false", "-ldflags", LDFLAGS, "-o", str(tmp / "bin"),
               *(pkg for pkg, _ in TOOLS)]
        done = subprocess.run(cmd, cwd=src, env=_go_env(), stdout=subprocess.PIPE,
                              stderr=subprocess.STDOUT, text=True)
        if done.returncode != 0:
            sys.stderr.write(done.stdout)
            raise subprocess.CalledProcessError(done.returncode, cmd, output=done.stdout)
    missing = [name for _, name in TOOLS if not (tmp / "bin" / name).is_file()]
    if missing:
        raise RuntimeError(f"go build left no {', '.join(missing)} in {tmp / 'bin'}")
    _writable_copy(source / "sampleconfig", tmp / "sampleconfig")


# -- Fabric 2.5.16 --------------------------------------------------------------------------
# The Go module proxy serves no Fabric 2.x (its tags are not valid module versions: its go.mod
# says github.com/hyperledger/fabric, no /v2). So its source comes from a path the user gives,
# ORDEAL_FABRIC_SOURCE_2_5: a `git archive` tarball of the tag with its vendor/ tree (.tar.xz,
# .tar.gz or .tar) or an unpacked tree; without one it is cloned by its tag from GitHub where
# the network allows. It is built on first use, never by the bootstrap.
FABRIC_2_5 = "2.5.16"
SOURCE_ENV = "ORDEAL_FABRIC_SOURCE_2_5"
TOOLS_2_5 = (("./cmd/orderer", "orderer"), ("./cmd/configtxgen", "configtxgen"), ("./cmd/cryptogen", "cryptogen"))
REPOSITORY = Path(__file__).resolve().parents[2]


class FabricSourceMissing(RuntimeError):
    """No source tree of Fabric 2.5 to build from (one line: where to give one)."""


def _source_2_5() -> Path | None:
    given = os.environ.get(SOURCE_ENV)
    return Path(given).expanduser().resolve() if given else None


def _source_digest(source: Path | None) -> str:
    """What the build key takes of the source: the tarball's bytes, a tree's path and mtime,
    or the tag when it is cloned."""
    if source is None:
        return f"git:v{FABRIC_2_5}"
    if source.is_file():
        import hashlib

        h = hashlib.sha256()
        with open(source, "rb") as f:
            for block in iter(lambda: f.read(1 << 20), b""):
                h.update(block)
        return h.hexdigest()
    return f"{source}:{source.stat().st_mtime_ns}"


def _unpack_2_5(source: Path | None, into: Path) -> Path:
    """The 2.5.16 tree, writable, under `into`."""
    if source is None:
        try:
            subprocess.run(["git", "clone", "--depth", "1", "--branch", f"v{FABRIC_2_5}",
                            "https://github.com/hyperledger/fabric", str(into / "fabric")],
                           check=True, capture_output=True, text=True, timeout=600)
        except (subprocess.SubprocessError, OSError) as exc:
            raise FabricSourceMissing(
                f"Fabric {FABRIC_2_5}'s source: set {SOURCE_ENV} to its tarball or tree (the Go module proxy "
                f"serves no Fabric 2.x, and cloning tag v{FABRIC_2_5} failed: {exc.__class__.__name__})") from None
        return into / "fabric"
    if source.is_dir():
        _writable_copy(source, into / "fabric", ignore=shutil.ignore_patterns(".git"))
        return into / "fabric"
    if not source.is_file():
        raise FabricSourceMissing(f"{SOURCE_ENV}={source}: no such file or directory")
    subprocess.run(["tar", "-xf", str(source), "-C", str(into)], check=True)
    trees = [p for p in into.iterdir() if (p / "go.mod").is_file()]
    if len(trees) != 1:
        raise FabricSourceMissing(f"{source}: not a Fabric source tarball (no one folder with a go.mod in it)")
    return trees[0]


def fabric_tools_2_5(cache: Path, patches: tuple[str, ...] = ()) -> Path:
    """`cache/fabric-2.5.16/<key>/` with bin/{orderer,configtxgen,cryptogen} and sampleconfig/,
    built once per source, patch set, Go toolchain and flags: `patches` (paths from the
    repository's root) are applied to the source, in order, before the build."""
    source = _source_2_5()
    patch_files = [REPOSITORY / p for p in patches]
    missing = [str(p) for p in patch_files if not p.is_file()]
    if missing:
        raise FabricSourceMissing(f"orderer.patches: no such file {missing[0]}")
    ldflags = f"-X {FABRIC_MODULE}/common/metadata.Version={FABRIC_2_5}"
    key = artifacts.digest(FABRIC_2_5, _source_digest(source), _go_version(), ldflags,
                           *(p.read_bytes() for p in patch_files), *(pkg for pkg, _ in TOOLS_2_5))

    def build(out: Path) -> None:
        with tempfile.TemporaryDirectory(prefix="ordeal-fabric25-src-") as work:
            tree = _unpack_2_5(source, Path(work))
            for patch in patch_files:
                done = subprocess.run(["git", "apply", "--whitespace=nowarn", str(patch)], cwd=tree,
                                      capture_output=True, text=True)
                if done.returncode != 0:
                    raise RuntimeError(f"patch {patch.name} does not apply to Fabric {FABRIC_2_5}: "
                                       f"{(done.stdout + done.stderr).strip().splitlines()[-1:]}")
            vendored = (tree / "vendor" / "modules.txt").is_file()
            cmd = ["go", "build", "-trimpath", "-buildvcs=false", f"-mod={'vendor' if vendored else 'mod'}",
                   "-ldflags", ldflags, "-o", str(out / "bin"), *(pkg for pkg, _ in TOOLS_2_5)]
            (out / "bin").mkdir()
            done = subprocess.run(cmd, cwd=tree, env=artifacts.go_env(), stdout=subprocess.PIPE,
                                  stderr=subprocess.STDOUT, text=True)
            if done.returncode != 0:
                sys.stderr.write(done.stdout)
                raise subprocess.CalledProcessError(done.returncode, cmd, output=done.stdout)
            _writable_copy(tree / "sampleconfig", out / "sampleconfig")

    label = f"Fabric {FABRIC_2_5}'s tools" + (f" with {len(patches)} patch(es)" if patches else "")
    return built_once(cache / "fabric-2.5" / key, build, label)
