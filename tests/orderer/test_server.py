"""The OSN's command line and the generated wire code it imports."""
import json
from pathlib import Path

from osn import server
from clusters.images.protos import SOURCES, generate, stale

WIRE = Path(server.__file__).parent / "wire"


def test_unusable_config_exits_2_with_one_line(tmp_path, capsys):
    config = tmp_path / "osn.json"
    config.write_text("{not json")
    assert server.main(["--config", str(config)]) == 2
    assert capsys.readouterr().err.count("\n") == 1


def test_generated_modules_import_only_through_the_package_path():
    for module in WIRE.rglob("*.py"):
        for line in module.read_text().splitlines():
            if line.startswith(tuple(f"{kw} {p}" for kw in ("from", "import") for p in ("common", "msp", "orderer", "peer"))):
                raise AssertionError(f"{module.name}: bare import {line!r}")


def test_wire_code_is_generated_from_fabrics_protos_and_current(tmp_path):
    generate(tmp_path / "wire")
    assert not stale(tmp_path / "wire")
    for source in SOURCES:
        assert (tmp_path / "wire" / source.replace(".proto", "_pb2.py")).is_file()
    assert not stale(WIRE), "osn/wire is older than its inputs: run the bootstrap"


def test_damaged_ledger_stops_the_osn_with_exit_3(tmp_path, capsys):
    ledger_dir = tmp_path / "ledger"
    ledger_dir.mkdir()
    (ledger_dir / "ch0.blocks").write_bytes(b"\x00\x00\x00\x02" + b"\x00" * 4 + b"ab" + b"\x00" * 40)
    config = tmp_path / "osn.json"
    config.write_text(json.dumps({
        "name": "osn1", "listen": "127.0.0.1:0", "operations_listen": "127.0.0.1:0",
        "kafka_bootstrap_servers": ["127.0.0.1:1"], "ledger_dir": str(ledger_dir), "channels": ["ch0"]}))
    assert server.main(["--config", str(config)]) == 3
    assert "ch0.blocks" in capsys.readouterr().err
