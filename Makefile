# The two commands of README.md. Both set up what is missing first (idempotent).
.PHONY: bootstrap run test nightly clean lock newest

bootstrap:
	@bash clusters/bootstrap.sh

run: bootstrap
	.venv/bin/ordeal run default

# Unit and real-cluster tests (the 15 slowest named at the end: what to move to the nightly suite
# when make test nears its hour), then the smoke suite of chaos scenarios (scenarios/suites/smoke.toml).
# Every test's and every smoke run's duration is kept in ordeal's cache (last-make-test/), as a
# passing run's output may not be kept.
LAST := $(or $(ORDEAL_CACHE),$(HOME)/.cache/ordeal)/last-make-test
test: bootstrap
	@mkdir -p "$(LAST)"
	.venv/bin/pytest -q -ra --durations=15 --junitxml="$(LAST)/pytest.xml"
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
