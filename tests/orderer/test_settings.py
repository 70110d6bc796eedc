"""The OSN config file: defaults, writers, and one-line refusals."""
import json

import pytest

from osn.settings import OsnSettings, SettingsError, load_settings

MINIMAL = {"name": "osn1", "kafka_bootstrap_servers": ["10.0.0.21:9094"], "channels": ["ch0", "ch1"]}


def test_minimal_file_takes_fabric_like_defaults(tmp_path):
    path = tmp_path / "osn.json"
    path.write_text(json.dumps(MINIMAL))
    settings = load_settings(path)
    assert settings.producer.acks == "all" and settings.producer.retries == 3
    assert not settings.producer.enable_idempotence
    assert settings.listen == "0.0.0.0:7050"


def test_channel_without_writers_accepts_anyone_and_listed_channel_only_its_writers():
    settings = OsnSettings.model_validate({**MINIMAL, "writers": {"ch0": ["alice"]}})
    assert settings.may_write("ch1", "mallory")
    assert settings.may_write("ch0", "alice") and not settings.may_write("ch0", "mallory")


def test_writers_for_an_unknown_channel_are_refused_in_one_line(tmp_path):
    path = tmp_path / "osn.json"
    path.write_text(json.dumps({**MINIMAL, "writers": {"ch9": ["*"]}}))
    with pytest.raises(SettingsError, match="writers.ch9"):
        load_settings(path)


def test_preferred_bytes_above_absolute_bytes_are_refused():
    with pytest.raises(ValueError, match="preferred_max_bytes"):
        OsnSettings.model_validate({**MINIMAL, "batch": {"absolute_max_bytes": 10, "preferred_max_bytes": 11}})


def test_unknown_setting_is_refused(tmp_path):
    path = tmp_path / "osn.json"
    path.write_text(json.dumps({**MINIMAL, "batch_size": 3}))
    with pytest.raises(SettingsError, match="batch_size"):
        load_settings(path)
