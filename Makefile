# The two commands of README.md. Both set up what is missing first (idempotent).
.PHONY: bootstrap run test nightly clean

bootstrap:
	@bash clusters/bootstrap.sh

run: bootstrap
	.venv/bin/ordeal run default

# Unit and real-cluster tests, then the smoke suite of chaos scenarios (scenarios/suites/smoke.toml).
test: bootstrap
	.venv/bin/pytest -q -ra
	.venv/bin/ordeal suite smoke

nightly: bootstrap
	.venv/bin/ordeal suite nightly

clean:
	.venv/bin/ordeal clean
