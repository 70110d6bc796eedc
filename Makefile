# The two commands of README.md. Both set up what is missing first (idempotent).
.PHONY: bootstrap run test nightly clean lock newest

bootstrap:
	@bash clusters/bootstrap.sh

run: bootstrap
	.venv/bin/ordeal run default

# The offline tier (in pytest-xdist's workers: tests/conftest.py), then the real-cluster tests
# in one process (the 15 slowest of each named at its end: what to move to the nightly suite
# when make test nears its hour), then the smoke suite of chaos scenarios (scenarios/suites/smoke.toml).
# Every test's and every smoke run's duration is kept in ordeal's cache (last-make-test/), as a
# passing run's output may not be kept.
LAST := $(or $(ORDEAL_CACHE),$(HOME)/.cache/ordeal)/last-make-test
test: bootstrap
	@mkdir -p "$(LAST)"
	.venv/bin/pytest -q -ra --durations=15 -m "not cluster and not nightly" --junitxml="$(LAST)/pytest-offline.xml"
	.venv/bin/pytest -q -ra --durations=15 -m "cluster and not nightly" --junitxml="$(LAST)/pytest-cluster.xml"
	.venv/bin/ordeal suite smoke
	@cp store/suite-smoke/latest/suite.json "$(LAST)/smoke.json" 2>/dev/null || true

nightly: bootstrap
	.venv/bin/ordeal suite nightly

clean:
	.venv/bin/ordeal clean

# requirements.lock, every Python package at an exact version with its hashes: `make lock`
# resolves the newest versions pyproject.toml allows into it and prints what changed;
# `make newest` tries them first (offline tier and one model-OSN boot) without adopting them.
lock: bootstrap
	@bash clusters/lock.sh

newest: bootstrap
	@bash clusters/newest.sh
