"""One scenario end to end: cluster, workers, nemesis, heal, final reads, teardown, checks.

One generator (harness.plan) drives every thread: client threads (harness.worker) and
the nemesis thread ask it for their next op under one lock. Nemesis ops are recorded as process "nemesis". Whatever happens (end of the run, a bug,
SIGINT/SIGTERM), every fault is healed and the history flushed before teardown.
From the first op to the last final read, harness.crash_watch records a `crash` nemesis op
for every node that exits while no fault stopped it; it stops before the teardown.
"""
from __future__ import annotations

import functools
import logging
import signal
import threading
import time
from collections.abc import Callable
from dataclasses import dataclass, field
from datetime import datetime, timezone
from pathlib import Path
from typing import Any

from ground.client_gate import ClientGate
from ground.cluster_view import ClusterView
from ground.errors import UsageError
from ground.fault_outcome import FAILED, NO_TARGET, OUTCOME, TOOK_EFFECT, UNDO_FAILED, UNDONE
from ground.generator import Context, Pending, Phases
from ground.nemesis_protocol import NoTarget
from ground.op import INFO, NEMESIS, Op
from ground.recovery import OSN_GRACE, OSN_NOT_SERVING
from ground.run_files import HISTORY, LOGS, SCENARIO_JSON
from ground.run_record import EXIT_NOT_CHECKED, CheckResults, RunRecord, exit_code_of, verdict_of
from harness.crash_watch import CrashWatch
from harness.history import Recorder
from harness.plan import AWAIT_RECOVERY, HEAL_ALL, Plan
from harness.store import create_run_dir, point_latest, write_json
from harness.worker import PENDING, POLL, ClientWorker

log = logging.getLogger("ordeal.runner")

NEMESIS_GRACE = 30.0  # seconds a fault in progress may take to finish after a stop
REUSE_HEALTHY_TIMEOUT = 120.0  # seconds a reused cluster gets to show it is healthy


class RunError(RuntimeError):
    """The run could not start (no Docker, the cluster did not come up): one line."""


class ClusterLost(RunError):
    """The run's cluster was removed under it by something else: its history proves nothing
    about the system under test, so it gets no verdict (exit 3)."""


class Interrupted(BaseException):
    """SIGINT/SIGTERM while booting: unwinds Cluster.up, which removes what it made."""

    def __init__(self, signum: int):
        super().__init__(signum)
        self.signum = signum


@dataclass(frozen=True)
class Status:
    """What live progress shows."""

    phase: str
    elapsed: float
    total: float
    completed: int
    counts: dict[str, int]
    nemesis_ops: int
    active_faults: tuple[str, ...]


@dataclass
class RunResult:
    run_dir: Path
    valid: bool | str | None = None  # None: no verdict (not checked, or the check failed)
    checked: bool = True  # False: the run was told not to check (--no-check)
    check_error: str | None = None  # why the check gave no verdict (it raised, or could not start)
    faults_missed: str | None = None  # why the scenario's faults cannot be said to have happened
    results: dict[str, Any] | None = None
    report: Path | None = None
    signal: int | None = None
    counts: dict[str, int] = field(default_factory=dict)
    notes: list[str] = field(default_factory=list)

    @property
    def history(self) -> Path:
        return self.run_dir / HISTORY

    @property
    def exit_code(self) -> int:
        """0 valid, 1 invalid, 3 unknown (also when the check failed), 4 not checked,
        128+n when stopped by signal n."""
        if self.signal:
            return 128 + self.signal
        if not self.checked:
            return EXIT_NOT_CHECKED
        return exit_code_of(self.verdict)

    @property
    def verdict(self) -> str:
        """valid, invalid or unknown (also when not checked, or when the check failed)."""
        return verdict_of(self.valid)

    @property
    def faults(self) -> dict[str, Any]:
        """results.json's "faults" (checkers.faults): whether the run's faults took effect."""
        found = (self.results or {}).get("faults")
        return found if isinstance(found, dict) else {}

    @property
    def unknown_reason(self) -> str:
        """Why an unknown verdict is unknown: which checker could not decide, on what ("" else)."""
        if self.check_error is not None:
            return f"the check failed: {self.check_error}"
        return CheckResults.model_validate(self.results).unknown_reason() if self.results else ""

    def anomaly_summary(self) -> str:
        anomalies = (self.results or {}).get("anomalies") or {}
        parts = []
        for name, found in anomalies.items():
            count = found.get("count", "?") if isinstance(found, dict) else found
            parts.append(f"{name}: {count}")
        return ", ".join(parts) or "no anomalies"


class Runner:
    def __init__(self, plan: Plan, store_dir: Path, *, cluster: ClusterView | None = None, keep_cluster: bool = False,
                 check: bool = True, on_status: Callable[[Status], None] | None = None,
                 handle_signals: bool = True):
        self.plan = plan
        self.store_dir = Path(store_dir)
        self.keep_cluster = keep_cluster
        self.check = check
        self.on_status = on_status
        self.handle_signals = handle_signals
        self.cluster = cluster
        self._given_cluster = cluster
        self.run_dir: Path | None = None
        self.recorder: Recorder | None = None
        self._gen: Phases | None = None
        self._phase = "setup"
        self._awaiting_recovery = False
        self._cond = threading.Condition()
        self._busy = 0
        self._client_busy = 0  # of _busy, the client ops (the gate waits for them to end)
        self.gate = ClientGate(self._cond, lambda: self._client_busy)
        self._counts = {"ok": 0, "fail": 0, "info": 0}
        self._nemesis_ops = 0
        self._active: set[str] = set()
        self._heal_lock = threading.Lock()
        self._stop = threading.Event()
        self._signal: int | None = None
        self._booting = False
        self._crash: BaseException | None = None
        self._healed_once = False
        self._owned = False  # this run booted the cluster
        self._crash_watch: CrashWatch | None = None
        self._gone: str | None = None  # a node found removed during the run (_on_node_gone)

    # -- control ----------------------------------------------------------------
    def stop(self, signum: int | None = None) -> None:
        """Stop the run early: no new ops, heal, flush, tear down (what SIGINT/SIGTERM do)."""
        if self._signal is None:
            self._signal = signum
        self._stop.set()

    def _on_signal(self, signum: int, frame: object) -> None:
        # No locks here: the main thread may hold them when the signal arrives.
        self.stop(signum)
        if self._booting:
            raise Interrupted(signum)

    def status(self) -> Status:
        with self._cond:
            counts = dict(self._counts)
            nemesis_ops = self._nemesis_ops
            active = tuple(sorted(self._active))
        elapsed = self.recorder.elapsed_ns() / 1e9 if self.recorder else 0.0
        phase = self._gen.name if self._gen is not None and self._phase == "run" else self._phase
        if self._awaiting_recovery:  # the heal is done: what the run waits for is a whole cluster
            phase = "recovery"
        return Status(phase, elapsed, self.plan.total_seconds, sum(counts.values()), counts, nemesis_ops, active)

    # -- the run ----------------------------------------------------------------
    def run(self) -> RunResult:
        plan = self.plan
        client = _kafka_client(plan)  # before the run directory: a client that cannot be installed is bad input
        started = datetime.now(timezone.utc)
        self.run_dir = run_dir = create_run_dir(self.store_dir, plan.scenario.name, started)
        result = RunResult(run_dir)
        scenario = plan.scenario.model_dump(mode="json")
        # run.json is written twice: now, and once the run has ended and been checked
        # (_final_record). A run killed in between leaves the first, which says what ran.
        record = RunRecord(scenario=scenario, source=plan.source,
                           variant=plan.variant.model_dump(mode="json") if plan.variant is not None else {"name": None},
                           client=client, seed=plan.seed, started=_utc(started),
                           judgement=plan.judgement().model_dump() if plan.variant is not None else None)
        write_json(run_dir / SCENARIO_JSON, scenario)
        record.write(run_dir)

        previous = self._install_signal_handlers()
        try:
            try:
                self._booting = True
                self._phase = "boot"
                self._report_status()
                threading.Thread(target=self._boot_heartbeat, name="ordeal-boot-status", daemon=True).start()
                self._warm_checker()
                self._acquire_cluster()
            except Interrupted as exc:
                result.signal = exc.signum
                record.signal = exc.signum
                self._final_record(record, run_dir)
                return result
            finally:
                self._booting = False
            if self.cluster is not None:
                record.cluster = self.cluster.run
                record.orderer = self.cluster.orderer_description()
            self.recorder = Recorder(run_dir / HISTORY)
            # latest points at runs with a history only: not at one stopped while booting.
            point_latest(self.store_dir, run_dir)
            try:
                self._start_crash_watch()
                if not self._stop.is_set():
                    self._setup_workloads(result)
                    self._setup_nemeses()
                    self._phase = "run"
                    self._drive()
            except BaseException:  # KeyboardInterrupt from an embedding program, or a bug
                self._stop.set()  # workers take no new op while the faults are healed
                raise
            finally:
                self._phase = "heal"
                try:
                    if self._active or self._stop.is_set() or self._crash or not self._healed_once:
                        self._heal_everything()
                finally:
                    # Before teardown stops every node: from here on no exit is a crash.
                    self._stop_crash_watch(result)
                self.recorder.close()
        finally:
            self._phase = "teardown"
            self._report_status()
            self._keep_channel_offsets(run_dir)
            lost = self._cluster_lost()
            self._release_cluster(result)
            self._restore_signal_handlers(previous)
        result.counts = dict(self._counts)
        if self._signal is not None or (self._stop.is_set() and self._gone is None):
            result.signal = self._signal or signal.SIGTERM
        # How the run ended, for reports: an interrupted history is complete only up to the stop.
        record.finished = _utc(datetime.now(timezone.utc))
        record.completions, record.signal = result.counts, result.signal
        record.crashed = f"{self._crash.__class__.__name__}: {self._crash}" if self._crash else None
        record.lost = lost
        if self._crash is not None:
            self._final_record(record, run_dir)
            raise self._crash
        if lost:
            self._final_record(record, run_dir)
            raise ClusterLost(f"cluster lost: {lost}; no verdict (history in {result.history})")
        if result.signal:
            self._final_record(record, run_dir)
            return result
        result.checked = self.check
        if self.check:
            self._phase = "check"
            self._report_status()
            self._check(result, record)
        else:
            self._final_record(record, run_dir)
        self._phase = "done"
        return result

    @staticmethod
    def _final_record(record: RunRecord, run_dir: Path) -> None:
        """run.json's second and last write: how the run ended (and its check, if any)."""
        record.write(run_dir)

    def _boot_heartbeat(self) -> None:
        """Status while the cluster boots, as the main phase reports it, so a first boot
        (which may build images) never sits silent: the progress printer shows a line every
        few seconds of it, not one line at the start."""
        while not self._stop.wait(1.0) and self._booting:
            self._report_status()

    def _report_status(self) -> None:
        if self.on_status is not None:
            self.on_status(self.status())

    def _install_signal_handlers(self) -> dict[int, Any]:
        if not self.handle_signals or threading.current_thread() is not threading.main_thread():
            return {}
        return {s: signal.signal(s, self._on_signal) for s in (signal.SIGINT, signal.SIGTERM)}

    @staticmethod
    def _restore_signal_handlers(previous: dict[int, Any]) -> None:
        for s, handler in previous.items():
            signal.signal(s, handler)

    # -- cluster ----------------------------------------------------------------
    def _warm_checker(self) -> None:
        """Start the shared Spark Connect server (checkers.runtime.session.warm_shared) beside
        the cluster's boot, so that the check at the end does not wait for a JVM to start.
        Only for runs that boot or use a cluster and check in the shared local server."""
        if not (self.check and self.plan.needs_cluster):
            return
        from checkers.runtime.settings import server_idle, spark_remote

        try:
            idle = server_idle()
        except ValueError:
            return  # the check says so, at the end
        if spark_remote() is not None or idle <= 0:
            return
        from checkers.runtime.session import warm_shared

        threading.Thread(target=warm_shared, args=(idle,), name="ordeal-spark-warm", daemon=True).start()

    def _acquire_cluster(self) -> None:
        """Use the given cluster, or a running one of the same variant, or boot one (which
        this run then owns, and tears down unless told to keep it)."""
        if not self.plan.needs_cluster or self._given_cluster is not None:
            return
        from clusters.cluster import Cluster
        from clusters.errors import ClusterError

        variant = self.plan.variant
        try:
            # Only a kept, idle cluster is reused, and this run holds its lease until the end:
            # a cluster another run booted, or one in use, is never shared.
            running = Cluster.lease_kept(variant)
        except ClusterError as exc:  # the Docker engine is missing or not started
            raise RunError(str(exc)) from None
        if running is not None:
            try:
                running.wait_healthy(REUSE_HEALTHY_TIMEOUT)
            except Exception as exc:  # noqa: BLE001 - a kept cluster that is not healthy: say so
                running.release()
                raise RunError(f"running cluster {running.run} is not healthy ({exc}); "
                               "`ordeal cluster down` removes it") from None
            self.cluster = running
            return
        try:
            self.cluster = Cluster.up(variant, keep=self.keep_cluster)
            self._owned = True
        except ClusterError as exc:
            raise RunError(f"cluster did not come up: {exc}") from None

    def _keep_channel_offsets(self, run_dir: Path) -> None:
        """The channels' partition offsets as the run ends, before teardown: evidence of why an
        OSN may have stopped (harness/evidence.py)."""
        if self.cluster is not None and self.recorder is not None:
            from harness.evidence import keep_channel_offsets

            keep_channel_offsets(self.cluster, run_dir)

    def _cluster_lost(self) -> str | None:
        """Whether something other than this run removed (part of) its cluster."""
        if self.cluster is None:
            return None
        try:
            return self.cluster.lost()
        except Exception as exc:  # noqa: BLE001 - the Docker engine itself is gone
            return f"the Docker engine does not answer ({exc.__class__.__name__})"

    def _release_cluster(self, result: RunResult) -> None:
        cluster, logs = self.cluster, result.run_dir / LOGS
        if cluster is None:
            return
        try:
            if self._owned and not self.keep_cluster:
                cluster.down(logs_dir=logs)
            else:
                for node in cluster.nodes:
                    node.save_logs(logs)
                cluster.release()
        except Exception as exc:  # noqa: BLE001 - the history is already safe
            result.notes.append(f"teardown: {exc.__class__.__name__}: {exc}")

    # -- crashes ----------------------------------------------------------------
    def _start_crash_watch(self) -> None:
        """Watch every node of the cluster for exits no fault caused (harness.crash_watch),
        from the first recorded op to the last final read. On a reused cluster, nodes
        already down are an earlier run's business."""
        cluster = self.cluster
        if cluster is None or not cluster.nodes:
            return
        self._crash_watch = CrashWatch(lambda: list(cluster.nodes),
                                       lambda op: self._record_nemesis(op, None),
                                       baseline=not self._owned, on_gone=self._on_node_gone).start()

    def _on_node_gone(self, name: str) -> None:
        """A node's container was removed under the run: its cluster is lost (the teardown
        says so, and no verdict is given), so the run stops now, as a signal would stop it."""
        self._gone = name
        self._stop.set()

    def _look_for_crashes(self) -> None:
        """Record the crashes not seen yet, before a fault or a heal may start those nodes again."""
        watch = self._crash_watch
        if watch is not None:
            try:
                watch.poll()
            except Exception:  # noqa: BLE001 - never in the way of a fault or a heal
                log.exception("crash watch: a look at the nodes failed")

    def _stop_crash_watch(self, result: RunResult) -> None:
        watch, self._crash_watch = self._crash_watch, None
        if watch is None:
            return
        watch.stop()
        for op in watch.crashes:
            v = op["value"]
            result.notes.append(f"node {v['node']} ({v['role']}) crashed: exit code {v['exit_code']}"
                                + (", OOM-killed" if v["oom_killed"] else ""))

    # -- workers ----------------------------------------------------------------
    def _drive(self) -> None:
        self._gen = self.plan.generator()
        threads = [threading.Thread(target=self._guard, args=(self._client_worker, i), name=f"worker-{i}",
                                    daemon=True) for i in range(self.plan.scenario.concurrency)]
        threads.append(threading.Thread(target=self._guard, args=(self._nemesis_worker, NEMESIS),
                                        name="nemesis", daemon=True))
        for t in threads:
            t.start()
        stopped_at: float | None = None
        while any(t.is_alive() for t in threads):
            time.sleep(0.25)
            self._report_status()
            if self._stop.is_set():
                stopped_at = stopped_at or time.monotonic()
                if time.monotonic() - stopped_at > NEMESIS_GRACE:
                    log.warning("giving up on threads still busy after the stop")
                    break

    def _guard(self, body: Callable[[Any], None], thread: Any) -> None:
        try:
            body(thread)
        except BaseException as exc:  # a bug in ordeal: stop the run, heal, re-raise after
            self._crash = self._crash or exc
            self._stop.set()

    def _next(self, thread: int | str, process: int | str | None = None) -> Op | None:
        """The next op for `thread` (now running as `process`), waiting while the generator
        says Pending."""
        recorder, gen = self.recorder, self._gen
        assert recorder is not None and gen is not None
        with self._cond:
            while not self._stop.is_set():
                if thread != NEMESIS and self.gate.held:  # a fault holds the clients
                    self._cond.wait(POLL)
                    continue
                now = recorder.elapsed_ns()
                answer = gen.op(Context(now, thread, self._busy, process))
                if answer is None:
                    self._cond.notify_all()
                    return None
                if isinstance(answer, Pending):
                    wait = POLL if answer.until is None else min(POLL, max(0.0, (answer.until - now) / 1e9))
                    self._cond.wait(wait)
                    continue
                self._busy += 1
                if thread != NEMESIS:
                    self._client_busy += 1
                return answer
        return None

    def _done(self, kind: str) -> None:
        with self._cond:
            self._busy -= 1
            if kind == NEMESIS:
                self._nemesis_ops += 1
            else:
                self._counts[kind] += 1
                self._client_busy -= 1
            self._cond.notify_all()

    def _client_worker(self, thread: int) -> None:
        assert self.recorder is not None
        worker = ClientWorker(thread, recorder=self.recorder, workloads=self.plan.workloads, cluster=self.cluster,
                              concurrency=self.plan.scenario.concurrency, op_timeout=self.plan.scenario.op_timeout,
                              stop=self._stop, in_flight=self.plan.scenario.in_flight, on_done=self._done)
        try:
            while True:
                worker.wait_for_room()
                if (template := self._next(thread, worker.process)) is None:
                    break
                kind = INFO
                try:
                    kind = worker.perform(template)
                finally:
                    if kind != PENDING:  # an op started asynchronously calls _done when it completes
                        self._done(kind)
        finally:
            worker.close()

    def _nemesis_worker(self, thread: str) -> None:
        while (template := self._next(thread)) is not None:
            try:
                if template["f"] == HEAL_ALL:
                    self._heal_everything()
                elif template["f"] == AWAIT_RECOVERY:
                    self._await_recovery(template["limit"])
                else:
                    self._fault(template)
            finally:
                self._done(NEMESIS)

    def _setup_workloads(self, result: RunResult) -> None:
        """Each workload readies the cluster (its topics) before the first op. One that cannot
        is a note, not the end of the run: its clients' opens try again, and each failed
        open is recorded as a failed op."""
        if self.cluster is None:
            return
        for name, workload in self.plan.workloads.items():
            if workload.setup is None:
                continue
            try:
                workload.setup(self.cluster)
            except Exception as exc:  # noqa: BLE001 - the opens report it, op by op
                result.notes.append(f"workload {name}: setup failed ({exc.__class__.__name__}: {exc}); "
                                    "its clients try again when they open")

    # -- nemesis ----------------------------------------------------------------
    def _setup_nemeses(self) -> None:
        """Bind every nemesis, then let it undo what a crashed earlier run on a reused
        cluster may have left (recorded, before the first client op)."""
        for name, nem in self.plan.nemeses.items():
            bind = getattr(nem, "bind_recorder", None)
            if bind is not None:  # a fault that acts from its own threads (a liveness prober)
                bind(functools.partial(self._record_nemesis, fault=name))
            bind_gate = getattr(nem, "bind_client_gate", None)
            if bind_gate is not None:  # a fault that holds the clients (ground/client_gate.py)
                bind_gate(self.gate)
            nem.setup(self.cluster)
            for op in nem.heal_all() or []:
                self._record_nemesis(op, name)

    def _fault(self, template: Op) -> None:
        """Do one request of the schedule and record what it did, with its outcome
        (checkers.faults): whether a start took effect, failed or found no target, whether
        a stop undid it. The run goes on either way; the outcome is judged after it."""
        name = template["fault"]
        starting = template["f"] == "start"
        self._look_for_crashes()
        try:
            answer = self.plan.nemeses[name].invoke(dict(template))
            outcome = TOOK_EFFECT if starting else UNDONE
        except NoTarget as exc:
            answer = {"f": template["f"], "value": {"fault": name}, "error": f"{exc.__class__.__name__}: {exc}"}
            outcome = NO_TARGET if starting else UNDO_FAILED
        except Exception as exc:  # noqa: BLE001 - a failed fault is recorded, the run goes on
            answer = {"f": template["f"], "value": {"fault": name}, "error": f"{exc.__class__.__name__}: {exc}"}
            outcome = FAILED if starting else UNDO_FAILED
        if isinstance(answer, dict):
            answer = {**answer, OUTCOME: outcome}
        self._record_nemesis(answer, name)
        with self._cond:
            if template["f"] == "start":
                self._active.add(name)
            else:
                self._active.discard(name)

    def _record_nemesis(self, answer: Any, fault: str | None) -> None:
        if not isinstance(answer, dict):
            answer = {"f": "unknown", "value": answer, "error": "bad-nemesis-answer"}
        op: Op = {"process": NEMESIS, "type": INFO, "f": answer.get("f", "unknown"), "value": answer.get("value")}
        for key in ("node", "error", OUTCOME):
            if key in answer:
                op[key] = answer[key]
        if fault is not None:
            op["fault"] = fault
        assert self.recorder is not None
        self.recorder.record(op)  # nemesis ops flush the history at once

    def _heal_everything(self) -> None:
        """Every nemesis heals all it may have done, then one `heal` op marks that the
        cluster is whole again (final reads come after it). Safe to repeat."""
        with self._heal_lock:
            self._look_for_crashes()
            for name, nem in self.plan.nemeses.items():
                try:
                    ops = nem.heal_all() or []
                except Exception as exc:  # noqa: BLE001 - keep healing the others
                    ops = [{"f": "heal", "value": {"fault": name}, "error": f"{exc.__class__.__name__}: {exc}",
                            OUTCOME: UNDO_FAILED}]
                for op in ops:
                    self._record_nemesis(op, name)
            self._record_nemesis({"f": "heal", "value": {"all": True, "faults": sorted(self.plan.nemeses)}}, None)
            with self._cond:
                self._active.clear()
            self._healed_once = True

    def _await_recovery(self, limit: float, poll: float = 1.0) -> None:
        """Wait, at most `limit` seconds, until the cluster is whole again (Cluster.recovery_gaps),
        and record a `recovered` op: how long it took, or, with error not-recovered, what was
        still missing. Why: a broker started again after a kill can take minutes to rejoin
        (it reloads every log after an unclean stop), and until its replicas are back in sync
        a coordinator whose log partition fell below min.insync.replicas cannot end a txn.
        Final reads begun before that can only end incomplete, and their partitions unjudged."""
        if self.cluster is None:
            return
        probe = self.cluster.recovery_gaps
        began = time.monotonic()
        only_osns_since: float | None = None
        self._awaiting_recovery = True
        try:
            while True:
                try:
                    gaps = probe()
                except Exception as exc:  # noqa: BLE001 - a probe that fails is a gap, not the end of the run
                    gaps = [f"probe failed: {exc.__class__.__name__}: {exc}"]
                now = time.monotonic()
                waited = now - began
                # Kafka whole and only OSNs missing: a chain cut off from Kafka reconnects within
                # seconds of Kafka serving again (it retries every second); one still not serving
                # OSN_GRACE s later has halted for good (its partition lost what it had read), so
                # the rest of the limit would be waited for nothing.
                only_osns = bool(gaps) and all(g.endswith(OSN_NOT_SERVING) for g in gaps)
                only_osns_since = (only_osns_since or now) if only_osns else None
                halted = only_osns_since is not None and now - only_osns_since >= OSN_GRACE
                if not gaps or halted or waited >= limit or self._stop.is_set():
                    break
                time.sleep(min(poll, limit - waited))
        finally:
            self._awaiting_recovery = False
        op: dict[str, Any] = {"f": "recovered", "value": {"seconds": round(waited, 1), "gaps": gaps}}
        if gaps:
            op["error"] = "not-recovered"
        if halted:
            op["value"]["osns_given_up_after"] = OSN_GRACE
        self._record_nemesis(op, None)

    # -- plug-ins ---------------------------------------------------------------
    def _check(self, result: RunResult, record: RunRecord) -> None:
        """Check the history, write run.json for the last time, then the report (which reads
        both). A check that raises or cannot run gives no verdict: the run is unknown (exit 3)
        with the reason in result.check_error and in run.json's "check"; the history stays
        where it is. A report that fails is a note."""
        run_dir = result.run_dir
        variant = self.plan.variant
        idempotent = variant.producer.enable_idempotence if variant is not None else None
        try:
            from checkers.check import check_run
            from checkers.runtime.settings import server_idle, spark_remote

            results = check_run(result.history, out_dir=run_dir, idempotent=idempotent, remote=spark_remote(),
                                server_idle=server_idle(), note=result.notes.append)
        except Exception as exc:  # noqa: BLE001 - any failure of the check is a check that did not happen
            result.check_error = f"{exc.__class__.__name__}: {exc}".splitlines()[0]
            record.check = {"error": result.check_error}
            self._final_record(record, run_dir)
            return
        result.results, result.valid = results, results.get("valid", "unknown")
        result.faults_missed = CheckResults.model_validate(results).faults_missed(record)
        self._final_record(record, run_dir)
        try:
            from reports.report import write_report

            result.report = write_report(run_dir)
        except Exception as exc:  # noqa: BLE001
            result.notes.append(f"report failed: {exc.__class__.__name__}: {exc}")


def _kafka_client(plan: Plan) -> dict[str, str] | None:
    """Which Kafka client and release the run's Kafka workloads drive (run.json "client"). A
    librdkafka release of its own is installed (the first time) and started here, before
    anything boots; one that cannot be is a UsageError naming it (one line, exit 2)."""
    if plan.client is None or plan.variant is None:
        return None
    from workloads.kafka_clients import ClientUnavailable, KafkaClient

    try:
        return KafkaClient.of(plan.variant.model_copy(update={"client": plan.client})).describe()
    except ClientUnavailable as exc:
        raise UsageError(f"client: {exc}") from None


def _utc(moment: datetime) -> str:
    return moment.strftime("%Y-%m-%dT%H:%M:%S.%fZ")
