"""One cluster per variant for a sequence of runs (a pytest session, a suite): booted on
first use, or a kept idle one of the same variant leased (clusters/lease.py); removed at the end only if the
pool booted it. Booting once per variant is what makes a matrix of runs affordable; keeping
one at a time is what lets a small machine run it (order the runs by variant)."""
from __future__ import annotations

from typing import Any


class ClusterPool:
    def __init__(self, lease_kept: bool = True) -> None:
        """`lease_kept`: use a kept idle cluster of the variant when there is one. Reproducing
        a finding must not (a kept cluster may be the very one the finding's run left behind,
        data lost; and the pool cannot reboot a cluster it did not boot)."""
        self._clusters: dict[str, tuple[Any, bool]] = {}
        self._lease_kept = lease_kept

    def get(self, variant: Any) -> Any:
        """The cluster of `variant`; raises clusters.cluster.ClusterError when it cannot come up."""
        if variant.name not in self._clusters:
            from clusters.cluster import Cluster

            for other in list(self._clusters):
                self.release(other)
            running = Cluster.lease_kept(variant) if self._lease_kept else None
            self._clusters[variant.name] = (running, False) if running is not None else (Cluster.up(variant), True)
        return self._clusters[variant.name][0]

    def release(self, variant_name: str) -> None:
        """Tear down that variant's cluster now (if the pool booted it), to free the machine."""
        cluster, owned = self._clusters.pop(variant_name, (None, False))
        if owned:
            cluster.down()
        elif cluster is not None:
            cluster.release()

    def close(self) -> None:
        for name in list(self._clusters):
            self.release(name)
