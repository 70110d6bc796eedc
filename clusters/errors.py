"""What goes wrong when bringing a cluster up or reaching it, said in one line."""
from __future__ import annotations


def engine_unreachable(exc: BaseException) -> str:
    """The one line for a Docker engine that does not answer (missing or not started), with its cure."""
    return f"cannot reach the Docker engine ({exc.__class__.__name__}); run `make bootstrap` first"


class ClusterError(RuntimeError):
    """The cluster could not be brought up or reached; the message says which part."""
