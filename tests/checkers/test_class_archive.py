"""The checker JVM's class archive (checkers.class_archive): where it is kept, when a JVM
is told to map it, and that a JVM it does not fit starts anyway and says nothing."""
from __future__ import annotations

import subprocess
import zipfile
from pathlib import Path

import pytest

from checkers import class_archive
from checkers.session import session_settings, small_jvm_options

pytestmark = pytest.mark.skipif(class_archive._java() is None, reason="no java")


@pytest.fixture
def cache(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    monkeypatch.setenv("ORDEAL_CACHE", str(tmp_path))
    return tmp_path


def test_the_archive_is_kept_in_ordeals_cache_under_a_hash_of_the_jvm_options(cache: Path) -> None:
    small = class_archive.archive_path(small_jvm_options())
    assert small is not None and small.parent == cache and small.name.startswith(class_archive.ARCHIVE_PREFIX)
    assert class_archive.archive_path(small_jvm_options()) == small
    assert class_archive.archive_path(small_jvm_options() + " -Xmx1g") != small


def test_a_jvm_maps_the_archive_only_once_it_is_built(cache: Path) -> None:
    options = small_jvm_options()
    assert class_archive.java_options(options) == ""
    path = class_archive.archive_path(options)
    path.write_bytes(b"not yet an archive")
    assert class_archive.java_options(options) == f"-XX:SharedArchiveFile={path} {class_archive.QUIET_CDS}"


def test_every_checker_jvm_maps_the_one_archive(cache: Path) -> None:
    """The JVM for large histories, a check server's, maps the archive of the one for small ones."""
    path = class_archive.archive_path(small_jvm_options())
    assert all(f"-XX:SharedArchiveFile={path}" not in session_settings("local[2]", small_inputs=small)
               ["spark.driver.extraJavaOptions"] for small in (True, False))
    path.write_bytes(b"built")
    assert all(f"-XX:SharedArchiveFile={path}" in session_settings("local[2]", small_inputs=small)
               ["spark.driver.extraJavaOptions"] for small in (True, False))


def test_a_jvm_an_archive_does_not_fit_starts_and_says_nothing_about_it(tmp_path: Path) -> None:
    # An archive dumped with one classpath, then given to a JVM with another (as after an
    # upgrade of Spark's jars): the JVM says so unless told to be quiet, and starts either way.
    java, archive = class_archive._java(), tmp_path / "other.jsa"
    (tmp_path / "Hello.java").write_text('class Hello { public static void main(String[] a) { '
                                         'System.out.println("hello"); } }')
    subprocess.run([str(java.parent / "javac"), "-d", str(tmp_path), str(tmp_path / "Hello.java")], check=True)
    for name in ("a.jar", "b.jar"):
        with zipfile.ZipFile(tmp_path / name, "w") as jar:
            jar.write(tmp_path / "Hello.class", "Hello.class")
    subprocess.run([str(java), f"-XX:ArchiveClassesAtExit={archive}", class_archive.QUIET_CDS, "-cp",
                    str(tmp_path / "a.jar"), "Hello"], capture_output=True, check=True)
    assert archive.is_file()

    def start(*quiet: str) -> subprocess.CompletedProcess:
        return subprocess.run([str(java), f"-XX:SharedArchiveFile={archive}", *quiet, "-cp", str(tmp_path / "b.jar"),
                               "Hello"], capture_output=True, text=True)

    loud, quiet = start(), start(class_archive.QUIET_CDS)
    assert loud.returncode == quiet.returncode == 0
    assert "cds" in loud.stdout and loud.stdout.endswith("hello\n")  # the JVM warns on stdout
    assert (quiet.stdout, quiet.stderr) == ("hello\n", "")


def test_build_answers_at_once_when_the_archive_exists(cache: Path) -> None:
    path = class_archive.archive_path(small_jvm_options())
    path.write_bytes(b"built earlier")
    assert class_archive.build(cache) == f"class archive ready ({path.name})"
    assert path.read_bytes() == b"built earlier"


def test_the_archives_kept_are_those_used_last_not_those_built_last(cache: Path) -> None:
    """Another checkout's archive, built later, does not evict the one this checkout's JVMs map."""
    import os

    mine = class_archive.archive_path(small_jvm_options())
    mine.write_bytes(b"built first")
    others = [cache / f"{class_archive.ARCHIVE_PREFIX}other{n}.jsa" for n in range(3)]
    for n, path in enumerate([mine, *others]):
        path.write_bytes(b"built")
        os.utime(path, (1_000_000 + n, 1_000_000 + n))
    assert class_archive.java_options(small_jvm_options()).startswith(f"-XX:SharedArchiveFile={mine} ")
    class_archive.prune(cache, keep=3)
    assert sorted(p.name for p in cache.glob("*.jsa")) == sorted(p.name for p in [mine, *others[1:]])
