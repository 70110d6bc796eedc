"""One Python environment per confluent-kafka release, under ordeal's cache, built the first time
a run names the release (`[client] version`) and reused after.

Why an environment of its own: confluent-kafka is a C extension that loads its bundled
librdkafka into the process, and a process holds one of each; .venv's is ordeal's own. A
release's environment holds that confluent-kafka alone, on the Python .venv is made from,
installed by uv (in .venv, pinned by the lock; `python -m venv` and pip without it) from the
package index the machine's installers already use. Wheels only: a release without a wheel
for this Python is refused by the installer rather than compiled against a librdkafka of the
machine's.
"""
from __future__ import annotations

import re
import shutil
import subprocess
import sys
from pathlib import Path

from ground.cache import built_once, cache_dir

PACKAGE = "confluent-kafka"
INSTALL_TIMEOUT = 600.0  # seconds for each step of a build (a slow index, a large wheel)


class ClientUnavailable(RuntimeError):
    """A client release that cannot be installed or started; str() is one line naming it."""


def environment_key(version: str, python: tuple[int, ...] = tuple(sys.version_info[:2])) -> str:
    """The cache folder's name of `version`'s environment: the release and the Python it is
    built on (a wheel is for one Python; another Python is another environment)."""
    return f"{PACKAGE}-{version}-py{python[0]}.{python[1]}"


def environment(version: str, cache: Path | None = None) -> Path:
    """The environment holding confluent-kafka `version`, built once (concurrent callers wait
    for the first); ClientUnavailable when it cannot be installed."""
    final = (cache or cache_dir()) / "librdkafka-client" / environment_key(version)
    return built_once(final, lambda work: _install(version, work), f"{PACKAGE} {version}")


def python_of(env: Path) -> Path:
    return env / "bin" / "python"


def _install(version: str, work: Path) -> None:
    uv = shutil.which("uv", path=str(Path(sys.executable).parent)) or shutil.which("uv")
    requirement = f"{PACKAGE}=={version}"
    python = python_of(work)
    if uv:
        steps = [[uv, "venv", "--quiet", "--allow-existing", "--relocatable", "--python", sys.executable, str(work)],
                 [uv, "pip", "install", "--quiet", "--python", str(python), "--only-binary", ":all:", requirement]]
    else:
        steps = [[sys.executable, "-m", "venv", str(work)],
                 [str(python), "-m", "pip", "install", "--quiet", "--only-binary", ":all:", requirement]]
    steps.append([str(python), "-I", "-c", "import confluent_kafka as c; v = c.version(); "
                                           "print(v[0] if isinstance(v, tuple) else v)"])
    for step in steps:
        try:
            done = subprocess.run(step, capture_output=True, text=True, timeout=INSTALL_TIMEOUT)
        except subprocess.TimeoutExpired:
            raise ClientUnavailable(f"{PACKAGE} {version} could not be installed: "
                                    f"{Path(step[0]).name} took over {INSTALL_TIMEOUT:.0f} s") from None
        if done.returncode != 0:
            raise ClientUnavailable(f"{PACKAGE} {version} could not be installed: {_reason(done.stderr or done.stdout)}")
    installed = done.stdout.strip()
    if installed != version:
        raise ClientUnavailable(f"{PACKAGE} {version} could not be installed: the environment holds {installed!r}")


def _reason(output: str, width: int = 300) -> str:
    """An installer's complaint as one line: its lines joined, uv's box drawing dropped."""
    words = " ".join(re.sub(r"^[\s×╰─▶│|]+", "", line) for line in output.splitlines() if line.strip())
    words = re.sub(r"\s+", " ", words).strip() or "no output"
    return words if len(words) <= width else words[: width - 3] + "..."
