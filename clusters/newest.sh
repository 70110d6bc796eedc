#!/usr/bin/env bash
# `make newest`: tomorrow's breakage, seen before it lands. Resolves the newest versions
# pyproject.toml allows into a scratch lock, and runs a copy of this working tree on it
# (its own .venv, wire/ and OSN image; the rest of ordeal's cache and images shared):
# the offline tier, then one boot of a model-OSN variant (a short default scenario on
# kraft-recommended). Prints what changed and what broke; exits 1 if anything broke.
# requirements.lock is not touched: `make lock` adopts the newest versions.
#
# Everything is kept under $ORDEAL_CACHE/newest/ (the scratch lock, the logs, the run).
set -uo pipefail
root=$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)
cache=${ORDEAL_CACHE:-$HOME/.cache/ordeal}
scratch=$cache/newest
tree=$scratch/tree
say() { echo "newest: $*"; }
[ -x "$root/.venv/bin/uv" ] || { say "no $root/.venv/bin/uv; run make bootstrap first" >&2; exit 2; }

# A copy of the working tree as it stands (tracked and new files; ignored ones left out).
# Its .venv lives beside it, so a second `make newest` only syncs what moved.
rm -rf "$tree"
mkdir -p "$tree" "$scratch/venv"
(cd "$root" && git ls-files -z --cached --others --exclude-standard \
  | xargs -0 tar --ignore-failed-read -cf - 2>/dev/null) | tar -C "$tree" -xf -
ln -s ../venv "$tree/.venv"

say "resolving the newest versions into a scratch lock"
if ! UV="$root/.venv/bin/uv" bash "$tree/clusters/lock.sh" >"$scratch/changes.txt" 2>"$scratch/lock.log"; then
  say "the newest versions do not resolve:"; tail -20 "$scratch/lock.log"; exit 1
fi
cp "$tree/requirements.lock" "$scratch/requirements.lock"

broke=()
# The scratch OSN image must not drop the tags of the images this tree's runs use.
export ORDEAL_KEEP_IMAGES=1
say "bootstrapping the copy on the scratch lock (log: $scratch/bootstrap.log)"
if ! make -C "$tree" bootstrap >"$scratch/bootstrap.log" 2>&1; then
  broke+=("bootstrap: $(grep -v '^bootstrap:' "$scratch/bootstrap.log" | tail -1)")
else
  say "the offline tier (log: $scratch/offline.log)"
  (cd "$tree" && .venv/bin/pytest -q -m "not cluster and not nightly" -p no:cacheprovider -rf) \
    >"$scratch/offline.log" 2>&1 || broke+=("offline tier: $(tail -1 "$scratch/offline.log")")
  grep '^FAILED\|^ERROR' "$scratch/offline.log" | sed 's/^/    /' >"$scratch/offline-failures.txt" || true
  say "one boot of a model-OSN variant (log: $scratch/boot.log)"
  rm -rf "$scratch/store"
  (cd "$tree" && .venv/bin/ordeal run default --variant kraft-recommended --duration 20 --quiet \
    --store "$scratch/store") >"$scratch/boot.log" 2>&1
  code=$?
  [ "$code" = 0 ] || broke+=("boot and run of kraft-recommended: exit $code, $(tail -1 "$scratch/boot.log")")
fi

echo
say "what changed against requirements.lock:"
sed 's/^/    /' "$scratch/changes.txt"
if [ ${#broke[@]} -eq 0 ]; then
  say "nothing broke: \`make lock\` would adopt these versions"
  exit 0
fi
say "what broke:"
for line in "${broke[@]}"; do echo "    $line"; done
cat "$scratch/offline-failures.txt" 2>/dev/null
exit 1
