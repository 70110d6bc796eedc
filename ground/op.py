"""Ops are plain data: one dict per history line (docs/history-format.md, "Format 1").

An op has `process`, `type`, `f`, `value` and, once recorded, `index` and `time`;
`node` and `error` are optional. Invoke and completion share `process` and `f`; a client
fills in only `type`, `value` and, when it has one, `error` or `node`.
"""
from __future__ import annotations

from typing import Any

Op = dict[str, Any]

INVOKE, OK, FAIL, INFO = "invoke", "ok", "fail", "info"
COMPLETIONS = frozenset((OK, FAIL, INFO))
NEMESIS = "nemesis"
# A client process torn down on purpose (Jepsen's crash op, scenario `client_crash_interval`):
# invoked and completed info by the worker itself, never handed to a client; the thread goes
# on as a new process with new clients. Not "crash", which the nemesis records for a node.
CLIENT_CRASH = "client-crash"

# Keys a client's answer may set on its completion; anything else it returns is ignored.
_COMPLETION_KEYS = ("type", "value", "error", "node")


def invoke(process: int | str, f: str, value: Any, **extra: Any) -> Op:
    return {"process": process, "type": INVOKE, "f": f, "value": value, **extra}


def completion(invoked: Op, answer: Op | None) -> Op:
    """The completion of `invoked` built from a client's answer: same process and f, the
    answer's type/value/error/node. A malformed answer is indeterminate (info), because
    nothing is known about what the call did."""
    done: Op = {"process": invoked["process"], "f": invoked["f"]}
    if not isinstance(answer, dict) or answer.get("type") not in COMPLETIONS:
        done.update(type=INFO, value=invoked.get("value"), error="bad-completion")
        return done
    for key in _COMPLETION_KEYS:
        if key in answer:
            done[key] = answer[key]
    done.setdefault("value", invoked.get("value"))
    return done


def indeterminate(invoked: Op, error: str) -> Op:
    """An info completion: the call may or may not have taken effect (timeout, crash)."""
    return {"process": invoked["process"], "type": INFO, "f": invoked["f"],
            "value": invoked.get("value"), "error": error}
