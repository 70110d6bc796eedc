"""Commands run from the host inside a node's network namespace (`nsenter -t PID -n`).

Only the network namespace is entered: the host's own binaries (iptables, this Python)
run against the node's firewall and sockets. That works while the node is paused (the
namespace belongs to the kernel, not to the frozen processes), so nothing here waits for
the node to answer, and the node needs no privileges. Every call has a time limit.
"""
from __future__ import annotations

import json
import subprocess
import sys
from typing import Literal

Reach = Literal["open", "refused", "timeout", "unreachable", "error"]

# A TCP connect to each address at once; "refused" proves the path is up as well as
# "open" does (the peer's kernel answered), "timeout" is what a DROP rule looks like.
_PROBE = r"""
import errno, json, socket, sys, threading
addrs, timeout = json.loads(sys.argv[1]), float(sys.argv[2])
out = {}
def probe(ip, port):
    s = socket.socket(socket.AF_INET, socket.SOCK_STREAM)
    s.settimeout(timeout)
    try:
        s.connect((ip, port)); r = "open"
    except socket.timeout:
        r = "timeout"
    except ConnectionRefusedError:
        r = "refused"
    except OSError as e:
        r = "unreachable" if e.errno in (errno.EHOSTUNREACH, errno.ENETUNREACH) else "error"
    finally:
        s.close()
    out[f"{ip}:{port}"] = r
ts = [threading.Thread(target=probe, args=(ip, port)) for ip, port in addrs]
[t.start() for t in ts]; [t.join() for t in ts]
print(json.dumps(out))
"""


class NamespaceError(RuntimeError):
    """A command in a node's namespace failed; the message names the node and the command."""


def run(pid: int, argv: list[str], *, stdin: str | None = None, timeout: float = 15.0) -> str:
    """Run argv in the network namespace of host process `pid`; its stdout."""
    if pid <= 0:
        raise NamespaceError(f"no namespace: pid {pid}")
    try:
        done = subprocess.run(["nsenter", "-t", str(pid), "-n", *argv], input=stdin, capture_output=True,
                              text=True, timeout=timeout, check=False)
    except subprocess.TimeoutExpired:
        raise NamespaceError(f"pid {pid}: {argv[0]} took more than {timeout:.0f} s") from None
    if done.returncode != 0:
        raise NamespaceError(f"pid {pid}: {' '.join(argv[:3])}: exit {done.returncode}: {done.stderr.strip()[:300]}")
    return done.stdout


def tcp_probe(pid: int, addresses: list[tuple[str, int]], timeout: float = 2.0) -> dict[str, Reach]:
    """From inside the namespace, try a TCP connect to every "ip:port" at once."""
    if not addresses:
        return {}
    out = run(pid, [sys.executable, "-c", _PROBE, json.dumps(addresses), str(timeout)], timeout=timeout + 10)
    return json.loads(out)


def reachable(result: Reach) -> bool:
    return result in ("open", "refused")
