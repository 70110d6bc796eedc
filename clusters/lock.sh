#!/usr/bin/env bash
# `make lock`: resolve pyproject.toml's dependencies (the dev tools included) afresh, each at
# the newest version its bounds allow, into requirements.lock with every file's sha256, and
# print what changed. The bootstrap then installs exactly the new lock (and the OSN image
# takes its part of it) on the next `make run` or `make test`.
#
#   clusters/lock.sh [OUT]   OUT defaults to requirements.lock (`make newest` writes a scratch one)
#
# Why uv's resolver: it resolves from the index's metadata in seconds and records the hash of
# every file of each release (all platforms), so one lock serves the host's venv and the
# OSN image's manylinux wheels alike; pip-tools' pip-compile runs pip's resolver, downloads
# what it resolves, and takes minutes. The lock is in requirements.txt form, so plain pip
# can install it too.
set -euo pipefail
root=$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)
out=${1:-$root/requirements.lock}
uv=${UV:-$root/.venv/bin/uv}
[ -x "$uv" ] || { echo "lock: no $uv; run make bootstrap first" >&2; exit 2; }
tmp=$(mktemp "${out}.XXXXXX")
trap 'rm -f "$tmp"' EXIT
# The platform of the host's venv and of the OSN image alike: CPython 3.11 on x86_64 Linux.
(cd "$root" && "$uv" pip compile pyproject.toml --extra dev --generate-hashes --quiet \
  --python-version 3.11 --python-platform x86_64-manylinux_2_28 \
  --custom-compile-command "make lock" -o "$tmp")
python3 "$root/clusters/images/pylock.py" diff "$root/requirements.lock" "$tmp"
mv "$tmp" "$out"
trap - EXIT
echo "lock: wrote $out"
