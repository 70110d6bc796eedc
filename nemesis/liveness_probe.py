"""kafka-loss-probed: the ordering service nodes lose every Kafka broker while a liveness
probe watches them, as Kubernetes would (an httpGet livenessProbe on the orderer's
operations endpoint, the kubelet restarting the container after `failure_threshold`
failed probes in a row).

The cascade it reproduces on Fabric v1.4.12: cut off from Kafka, the orderer's /healthz
stops answering in time (its Kafka chain's health check blocks in producer.SendMessage);
the prober restarts the orderer; the orderer comes back while Kafka is still unreachable,
so its chain has no producer yet, and the next probe dereferences it (nil pointer in
orderer/consensus/kafka/chain.go:278): the orderer exits by itself. The harness's crash
watch reports that exit. This fault never starts a node it did not kill, so the crash
stays visible (the node stays down) until heal_all.

- start: every OSN is cut from every broker (iptables, partition.py's Firewall; ZooKeeper
  keeps every link, the brokers keep talking to each other), then one probe thread per OSN
  GETs http://<osn ip>:8443/healthz every `probe_interval` (first one an interval after
  the cut), with `probe_timeout`. After `failure_threshold` failures in a row (not 200, or
  no answer in time) it restarts the node: node.kill() then node.start() (so the node's
  expected_down says the kill was meant), recorded as nemesis ops "kill" and "start" with
  value {"nodes": [name], "by": "liveness-probe"}. A node found down that the prober did
  not kill has exited by itself: it is left alone and no longer probed in this window.
- stop: probing ends first (threads stopped and joined: a restart under way completes and
  is recorded), then the partition is healed. Probing covers the fault window only, from
  the cut to the heal: every liveness op is done (and, with a bound recorder, recorded)
  before the heal op, and no probe-driven restart races the heal or lands outside the
  window. (A real kubelet keeps probing after Kafka is back; an orderer restarted just
  before the heal reconnects within Kafka.Retry.ShortInterval, 1 s here, and so would
  mostly escape a later probe anyway: the scenario's interval leaves room for the whole
  cascade inside the window instead.)
- heal_all: probing ends, the partition is healed, then every OSN that is down is started
  (as kill-osn's heal_all), crashed ones included, so final reads can reach them.

Recording: the ops the prober does on its own, from its own threads, go to `self.record`
(nemesis.fault.Fault.bind_recorder) at the moment they are done; the runner's recorder is
thread-safe. Until something binds it, they are kept, and returned with the next stop (in
its value, "liveness_ops") or heal_all (as ops of their own, before its heal op): nothing
done is lost, only its time.
"""
from __future__ import annotations

import http.client
import logging
import random
import threading
import time
import urllib.request
from collections.abc import Callable
from typing import Any

from pydantic import BaseModel, ConfigDict, Field, model_validator

from ground.cluster_view import NodeView
from clusters.node_config import OSN_OPERATIONS_PORT
from ground.op import Op
from nemesis import topologies
from nemesis.fault import Fault, op
from nemesis.partition import Firewall
from nemesis.targets import NoTarget

log = logging.getLogger(__name__)

NAME = "kafka-loss-probed"
BY = "liveness-probe"  # value.by of the prober's kill / start ops
HEALTHZ = "/healthz"
DOWN = ("exited", "created", "dead")  # docker states of a node that can be started again
# No probe thread outlives this, whatever becomes of stop / heal_all (they end it first).
PROBING_LIMIT = 3600.0
# How long stop / heal_all wait for a probe thread beyond its probe: a restart under way
# (node.kill waits up to 30 s for the container) completes and is recorded first.
JOIN_GRACE = 90.0

# probe(ip, timeout) -> healthy: the liveness probe of one node.
Probe = Callable[[str, float], bool]

# No proxy, whatever the environment says: the probe goes to the cluster's own container.
_OPENER = urllib.request.build_opener(urllib.request.ProxyHandler({}))


def http_probe(ip: str, timeout: float) -> bool:
    """The kubelet's httpGet probe of an OSN's operations endpoint: healthy only when it
    answers 200 within `timeout`. A refused or reset connection, a timeout, any other
    status: unhealthy."""
    try:
        with _OPENER.open(f"http://{ip}:{OSN_OPERATIONS_PORT}{HEALTHZ}", timeout=timeout) as resp:
            return resp.status == 200
    except (OSError, ValueError, http.client.HTTPException):  # HTTPError (a 503) is an OSError
        return False


class LivenessOptions(BaseModel):
    """The liveness probe, in the kubelet's terms (periodSeconds, timeoutSeconds,
    failureThreshold)."""

    model_config = ConfigDict(extra="forbid", frozen=True)

    probe_interval: float = Field(2.0, ge=0.01, le=60, description="seconds between probes of a node")
    probe_timeout: float = Field(1.0, ge=0.01, le=30, description="seconds a probe waits for its answer")
    failure_threshold: int = Field(3, ge=1, le=30, description="failed probes in a row that restart a node")
    seed: int = 0

    @model_validator(mode="after")
    def _one_probe_at_a_time(self) -> "LivenessOptions":
        if self.probe_timeout > self.probe_interval:
            raise ValueError(f"probe_timeout ({self.probe_timeout}) exceeds probe_interval ({self.probe_interval})")
        return self


class KafkaLossProbed(Fault):
    """start: OSNs cut from every broker, and probed; stop: probing ends, partition healed;
    heal_all: the same, and every OSN that is down started."""

    name = NAME

    def __init__(self, options: LivenessOptions, *, probe: Probe = http_probe,
                 firewall: Callable[[Any], Any] = Firewall, probing_limit: float = PROBING_LIMIT):
        super().__init__(options.seed)
        self.options = options
        self._probe = probe
        self._firewall = firewall
        self._probing_limit = probing_limit
        self.active = False
        self._lock = threading.Lock()
        self._halt = threading.Event()
        self._threads: list[threading.Thread] = []
        self._stats: dict[str, dict[str, int]] = {}
        self._killed: set[str] = set()      # killed by the prober and not started again yet
        self._left_down: set[str] = set()   # found down without the prober having killed them
        self._unrecorded: list[Op] = []

    # -- the verbs --------------------------------------------------------------
    def start(self, rng: random.Random) -> Op:
        if self._threads:  # a start without a stop: the earlier window's probing ends here
            self._end_probing()
        osns = sorted(n.name for n in self.cluster.by_role("osn"))
        brokers = sorted(n.name for n in self.cluster.by_role("kafka"))
        if not osns or not brokers:
            raise NoTarget("kafka-loss-probed needs OSNs and brokers")
        fw = self._firewall(self.cluster)
        graph = topologies.grudge(fw.names(), [osns, brokers])
        self.active = True  # before the rules: a failure half-way still gets healed
        fw.apply(graph)
        self._begin_probing(osns)
        o = self.options
        return op("partition", self.name, **topologies.describe(graph, "osns-from-brokers"), nodes=osns,
                  probe={"interval": o.probe_interval, "timeout": o.probe_timeout,
                         "failure_threshold": o.failure_threshold})

    def stop(self) -> Op:
        value, pending = self._heal()
        if pending:
            value["liveness_ops"] = pending
        return op("heal", self.name, **value)

    def heal_all(self) -> list[Op]:
        was_active = self.active or bool(self._threads)
        value, pending = self._heal()
        ops: list[Op] = list(pending)
        if was_active or not value.get("connected", True):
            ops.append(op("heal", self.name, **value))
        started = []
        for node in self.cluster.by_role("osn"):
            if node.state in DOWN:
                node.start()
                started.append(node.name)
        with self._lock:
            self._killed.clear()
        if started:
            ops.append(op("start", self.name, nodes=started, by="heal"))
        return ops

    # -- probing ----------------------------------------------------------------
    @property
    def probing(self) -> bool:
        return any(t.is_alive() for t in self._threads)

    def _begin_probing(self, names: list[str]) -> None:
        halt = threading.Event()
        self._halt = halt
        with self._lock:
            self._stats = {n: {"probes": 0, "failed": 0, "restarts": 0} for n in names}
            self._left_down = set()
        deadline = time.monotonic() + self._probing_limit
        self._threads = [threading.Thread(target=self._watch, args=(self.cluster.node(n), halt, deadline),
                                          name=f"liveness-probe-{n}", daemon=True) for n in names]
        for t in self._threads:
            t.start()

    def _end_probing(self) -> list[str]:
        """Stop every probe thread and wait for it; answers those still running after the
        grace (a node verb that hangs), which stop by themselves after their verb."""
        self._halt.set()
        deadline = time.monotonic() + self.options.probe_timeout + JOIN_GRACE
        for t in self._threads:
            t.join(max(0.0, deadline - time.monotonic()))
        stuck = sorted(t.name for t in self._threads if t.is_alive())
        self._threads = []
        return stuck

    def _watch(self, node: NodeView, halt: threading.Event, deadline: float) -> None:
        """One node's prober until `halt` or `deadline`: a probe every interval; a restart
        after failure_threshold failures in a row; the end when the node turns out to have
        exited by itself."""
        o = self.options
        failures = 0
        next_at = time.monotonic() + o.probe_interval
        try:
            while not halt.wait(max(0.0, next_at - time.monotonic())):
                if time.monotonic() >= deadline:
                    return
                next_at += o.probe_interval
                healthy = self._probe(node.ip, o.probe_timeout)
                if halt.is_set():
                    return
                self._count(node.name, probes=1, failed=0 if healthy else 1)
                failures = 0 if healthy else failures + 1
                if failures < o.failure_threshold:
                    continue
                failures = 0
                if not self._restart(node, o.failure_threshold):
                    return
                next_at = time.monotonic() + o.probe_interval  # the kubelet probes the new container afresh
        except Exception:  # noqa: BLE001 - a probe thread must not take the run down
            log.exception("liveness probe of %s failed", node.name)

    def _restart(self, node: NodeView, failures: int) -> bool:
        """Restart `node` as the kubelet would, unless it is down and the prober did not
        kill it (it exited by itself: left alone). Answers whether to keep probing it."""
        name = node.name
        state = node.state
        with self._lock:
            mine = name in self._killed
        if state == "missing" or (state in DOWN and not mine):
            with self._lock:
                self._left_down.add(name)
            log.info("liveness probe: %s is %s and was not killed by the prober; left alone", name, state)
            return False
        if state not in DOWN:
            with self._lock:
                self._killed.add(name)
            self._act("kill", node, failures=failures)
        started = self._act("start", node)
        if started:  # a start that failed is tried again at the next threshold
            with self._lock:
                self._killed.discard(name)
        self._count(name, restarts=1)
        return True

    def _count(self, name: str, **counts: int) -> None:
        with self._lock:
            stats = self._stats.setdefault(name, {"probes": 0, "failed": 0, "restarts": 0})
            for key, n in counts.items():
                stats[key] += n

    def _act(self, verb: str, node: NodeView, **detail: Any) -> bool:
        value = {"nodes": [node.name], "by": BY, **detail}
        try:
            getattr(node, verb)()
        except Exception as exc:  # noqa: BLE001 - recorded, as the runner records a failed fault
            self._emit({**op(verb, self.name, **value), "error": f"{exc.__class__.__name__}: {exc}"})
            return False
        self._emit(op(verb, self.name, **value))
        return True

    def _emit(self, done: Op) -> None:
        record = self.record
        if record is None:
            with self._lock:
                self._unrecorded.append(done)
            return
        record(done)

    # -- heal -------------------------------------------------------------------
    def _heal(self) -> tuple[dict[str, Any], list[Op]]:
        """End probing, then heal the partition. Answers the heal op's value (the heal, and
        what the probes saw) and the liveness ops no recorder has taken."""
        stuck = self._end_probing()
        summary: dict[str, Any] = {}
        with self._lock:
            if self._stats:
                summary["probes"] = {n: dict(s) for n, s in sorted(self._stats.items())}
            if self._left_down:
                summary["exited_by_themselves"] = sorted(self._left_down)
            pending, self._unrecorded = self._unrecorded, []
            self._stats, self._left_down = {}, set()
        if stuck:
            summary["probers_still_running"] = stuck
        value = self._firewall(self.cluster).heal()
        self.active = False
        return {**value, **summary}, pending
