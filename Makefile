# The two commands of README.md. Both set up what is missing first (idempotent).
.PHONY: bootstrap run test nightly clean

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
