"""Every bad input of issue 18 through the CLI, as a user gives it: exit 2, one line on
stderr, no traceback, and nothing booted.

The command's main() runs in this process, its file descriptors captured (a JVM's output
would show); one test starts the `ordeal` process itself, so that the entry point is held to
the same rule. Nothing can boot here: the offline tier's guard (tests/conftest.py) points DOCKER_HOST at a
socket that does not exist and refuses a Docker client in this process, so a command that reached boot would
fail otherwise (not with exit 2 and one line), and no run directory may appear in the store
(a run creates it before it boots).
"""
from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import pytest

from tests.histories import HistoryBuilder

REPO = Path(__file__).resolve().parent.parent.parent
NOOP = (REPO / "scenarios" / "noop.toml").read_text()
VARIANT = (REPO / "clusters" / "variants" / "fabric-recommended-model.toml").read_text()


def _ordeal_process(*args: str, cwd: Path) -> subprocess.CompletedProcess:
    env = dict(os.environ)  # DOCKER_HOST as the offline tier's guard set it (tests/conftest.py)
    env.pop("ORDEAL_SPARK_MASTER", None)
    return subprocess.run([sys.executable, "-m", "cli.main", *args], capture_output=True, text=True,
                          timeout=300, cwd=cwd, env=env)


@pytest.fixture
def ordeal(capfd, monkeypatch):
    """`ordeal ARGS` run by its main() in this process, in `cwd`, as a CompletedProcess (a
    process costs a second of imports, and this module starts dozens)."""
    from cli.main import main

    monkeypatch.delenv("ORDEAL_SPARK_MASTER", raising=False)

    def run(*args: str, cwd: Path) -> subprocess.CompletedProcess:
        monkeypatch.chdir(cwd)
        capfd.readouterr()
        try:
            code = main(list(args))
        except SystemExit as exc:  # argparse's refusals
            code = exc.code if isinstance(exc.code, int) else 2
        out, err = capfd.readouterr()
        return subprocess.CompletedProcess(["ordeal", *args], code, out, err)

    return run


def _one_line_exit_2(proc: subprocess.CompletedProcess, store: Path | None = None) -> str:
    """The error line; besides it stderr holds at most one progress line of ordeal check
    (saying which file it reads), nothing else (no Java, no traceback)."""
    err = proc.stderr
    lines = err.splitlines()
    assert (proc.returncode, "Traceback" in err, len(lines) in (1, 2)) == (2, False, True), err
    assert all(line.startswith("ordeal") for line in lines), err
    assert len(lines) == 1 or lines[0].startswith("ordeal check: reading "), err
    if store is not None:  # a run creates its directory before it boots: none was created
        assert not store.exists() or not list(store.iterdir()), list(store.iterdir())
    return lines[-1]


def _scenario(tmp_path: Path, text: str, name: str = "s.toml") -> Path:
    path = tmp_path / name
    path.write_text(text)
    return path


def _set(text: str, key: str, value: str) -> str:
    """The noop scenario with its top-level `key` set to `value` (TOML)."""
    lines = [line for line in text.splitlines() if not line.startswith(f"{key} ")]
    return f"{key} = {value}\n" + "\n".join(lines) + "\n"


# -- settings files ------------------------------------------------------------------

def test_non_utf8_scenario_variant_and_suite_files(tmp_path):
    bad = tmp_path / "bad.toml"
    bad.write_bytes(b'description = "caf\xe9"\n')
    store = tmp_path / "store"
    assert "not UTF-8" in _one_line_exit_2(_ordeal_process("run", str(bad), "--store", str(store), cwd=tmp_path), store)
    scenario = _scenario(tmp_path, _set(NOOP, "variant", json.dumps(str(bad))))
    assert "not UTF-8" in _one_line_exit_2(_ordeal_process("run", str(scenario), "--store", str(store), cwd=tmp_path),
                                           store)
    assert "not UTF-8" in _one_line_exit_2(_ordeal_process("suite", str(bad), "--store", str(store), cwd=tmp_path),
                                           store)


@pytest.mark.parametrize("key", ["duration", "recovery_wait", "final_read_time_limit"])
@pytest.mark.parametrize("value", ["inf", "1e300", "nan"])
def test_times_must_be_finite_and_bounded(ordeal, tmp_path, key, value):
    store = tmp_path / "store"
    scenario = _scenario(tmp_path, _set(NOOP, key, value))
    assert key in _one_line_exit_2(ordeal("run", str(scenario), "--store", str(store), cwd=tmp_path), store)


@pytest.mark.parametrize("value", ["inf", "1e300"])
def test_nemesis_interval_and_cli_duration_must_be_finite_and_bounded(ordeal, tmp_path, value):
    store = tmp_path / "store"
    scenario = _scenario(tmp_path, NOOP.replace("interval = 0.5", f"interval = {value}"))
    assert "interval" in _one_line_exit_2(ordeal("run", str(scenario), "--store", str(store), cwd=tmp_path),
                                          store)
    noop = str(REPO / "scenarios" / "noop.toml")
    assert "duration" in _one_line_exit_2(ordeal("run", noop, "--duration", value, "--store", str(store),
                                                  cwd=tmp_path), store)


@pytest.mark.parametrize("name", ["../../escaped", "/tmp/abs", "a b", "a;b", ".hidden", "a/b"])
def test_scenario_and_variant_names_are_safe_words(ordeal, tmp_path, name):
    store = tmp_path / "store"
    scenario = _scenario(tmp_path, _set(NOOP, "name", json.dumps(name)))
    assert "name" in _one_line_exit_2(ordeal("run", str(scenario), "--store", str(store), cwd=tmp_path), store)
    variant = tmp_path / "v.toml"
    variant.write_text(f"name = {json.dumps(name)}\n" + "\n".join(
        line for line in VARIANT.splitlines() if not line.startswith("name ")) + "\n")
    scenario = _scenario(tmp_path, _set(NOOP, "variant", json.dumps(str(variant))))
    assert "name" in _one_line_exit_2(ordeal("run", str(scenario), "--store", str(store), cwd=tmp_path), store)
    assert not (tmp_path.parent / "escaped").exists()


@pytest.mark.parametrize("override", ['{ "log.dirs" = "x\\nunclean.leader.election.enable=true" }',
                                      '{ "a=b" = "c" }', '{ "a b" = "c" }', '{ "x" = "y\\\\" }',
                                      '{ "x" = "y\\rz" }'])
def test_kafka_overrides_are_one_property_line_each(ordeal, tmp_path, override):
    store = tmp_path / "store"
    variant = tmp_path / "v.toml"
    text = VARIANT if "[kafka]" in VARIANT else VARIANT + "\n[kafka]\n"
    variant.write_text(text.replace("[kafka]", f"[kafka]\noverrides = {override}", 1))
    scenario = _scenario(tmp_path, _set(NOOP, "variant", json.dumps(str(variant))))
    assert "overrides" in _one_line_exit_2(ordeal("run", str(scenario), "--store", str(store), cwd=tmp_path),
                                           store)


def test_a_client_release_the_package_index_does_not_have_is_one_line_before_the_run_starts(ordeal, tmp_path,
                                                                                            monkeypatch):
    """A well-formed `[client] version` that cannot be installed is refused when the run prepares
    its client: before its run directory and any boot, naming the release."""
    monkeypatch.setenv("ORDEAL_CACHE", str(tmp_path / "cache"))
    store = tmp_path / "store"
    text = _set(_set(NOOP, "client", '{ implementation = "librdkafka", version = "2.99.0" }'), "variant",
                '"fabric-recommended"')
    line = _one_line_exit_2(ordeal("run", str(_scenario(tmp_path, text)), "--store", str(store), cwd=tmp_path), store)
    assert "client: confluent-kafka 2.99.0 could not be installed" in line


# -- ordeal check ---------------------------------------------------------------------

def _lost_write(tmp_path: Path, field: str | None = None, wrong=None) -> Path:
    h = HistoryBuilder()
    h.send(0, "t0", 1, offset=0)
    _, ack = h.send(0, "t0", 2, offset=1)
    h.final_read(9, "t0", 0, [(0, 1)])
    if field is not None:
        h.ops[ack]["value"][field] = wrong
    return h.write(tmp_path / "history.jsonl")


@pytest.mark.parametrize("field,wrong", [("offset", "0"), ("offset", "zero"), ("offset", 0.5),
                                         ("value", "1"), ("value", {"a": 1})])
def test_check_refuses_a_lost_write_hidden_behind_a_wrong_type(ordeal, tmp_path, field, wrong):
    line = _one_line_exit_2(ordeal("check", str(_lost_write(tmp_path, field, wrong)), cwd=tmp_path))
    assert f"line 4: value.{field} is" in line


def test_check_history_nested_too_deeply(ordeal, tmp_path):
    path = tmp_path / "history.jsonl"
    path.write_text('{"index": 0, "time": 1, "process": 0, "type": "invoke", "f": "send", "value": '
                    + "[" * 100_000 + "]" * 100_000 + "}\n")
    assert "nested too deeply" in _one_line_exit_2(ordeal("check", str(path), cwd=tmp_path))
    assert not (tmp_path / "history.parquet").exists()


def test_check_out_is_an_existing_file(ordeal, tmp_path):
    (tmp_path / "out").write_text("x")
    proc = ordeal("check", str(_lost_write(tmp_path)), "--out", str(tmp_path / "out"), cwd=tmp_path)
    assert "not a directory" in _one_line_exit_2(proc)


def test_check_bogus_spark_master(ordeal, tmp_path):
    proc = ordeal("check", str(_lost_write(tmp_path)), "--spark-master", "bogus://", cwd=tmp_path)
    assert "not a master URL" in _one_line_exit_2(proc)


def test_check_of_an_empty_file_is_unknown_without_java_output(ordeal, tmp_path):
    path = tmp_path / "history.jsonl"
    path.write_text("")
    proc = ordeal("check", str(path), cwd=tmp_path)
    assert (proc.returncode, proc.stderr.count("\n") <= 2, "Exception" in proc.stderr,
            "at org.apache" in proc.stderr) == (3, True, False, False), proc.stderr
    assert json.loads((tmp_path / "results.json").read_text())["valid"] == "unknown"
