# The two commands of README.md. Both set up what is missing first (idempotent).
.PHONY: bootstrap run test nightly clean

bootstrap:
	@bash clusters/bootstrap.sh

run: bootstrap
	.venv/bin/ordeal run default

# Unit and real-cluster tests (the 15 slowest named at the end: what to move to the nightly suite
# when make test nears its hour), then the smoke suite of chaos scenarios (scenarios/suites/smoke.toml).
test: bootstrap
	.venv/bin/pytest -q -ra --durations=15
	.venv/bin/ordeal suite smoke

nightly: bootstrap
	.venv/bin/ordeal suite nightly

clean:
	.venv/bin/ordeal clean
