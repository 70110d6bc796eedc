# The two commands of README.md. Both set up what is missing first (idempotent).
.PHONY: bootstrap run test clean

bootstrap:
	@bash clusters/bootstrap.sh

run: bootstrap
	.venv/bin/ordeal run default

test: bootstrap
	.venv/bin/pytest -q -ra

clean:
	.venv/bin/ordeal clean
