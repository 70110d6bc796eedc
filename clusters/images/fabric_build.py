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
