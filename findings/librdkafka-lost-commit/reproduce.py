#!/usr/bin/env python3
"""Reproducer: librdkafka acknowledges a committed transaction's record at the offset of an
earlier, aborted record (transactional producer, transaction protocol 1).

Sequence forced here, on one KRaft broker (combined broker and controller) in Docker:

 1. A transactional producer begins txn 1 and produces record A to partition 0.
 2. The broker appends A, but a small TCP proxy in this script, sitting between the client
    and the broker, drops the broker's Produce response (every other response, and every
    byte from the client to the broker, passes). librdkafka's request times out
    (socket.timeout.ms, 5 s here), it closes the connection and puts A back on the
    partition queue, marked possibly persisted, for a retry; a long retry.backoff.ms keeps
    that retry from going out before step 3.
 3. The application aborts txn 1: abort_transaction() purges A from the queue and returns.
 4. The proxy stops dropping. With the same producer, txn 2 produces record B to the same
    partition and commits. B's delivery report carries an offset; commit_transaction()
    returns without error.
 5. The partition is read back with isolation.level=read_committed (and read_uncommitted),
    and the segment file's batch headers are listed.

FAIL (exit 1): txn 2 committed but B is not in the log; its delivery report's offset holds A
(an aborted record). This happens when the client sends B with the same producer id, epoch and
base sequence as A: the broker treats it as a duplicate of A's batch and answers with A's
offset without appending it.
PASS (exit 0): B is readable under read_committed at the offset its delivery report gave.
Exit 2: setup error (Docker, image, broker start, client).

Needs: Python 3.8+, confluent-kafka (the client under test), the docker CLI. Nothing else.

    python3 reproduce.py                                  # apache/kafka:4.4.0, one run
    python3 reproduce.py --kafka-image apache/kafka:3.9.2 --runs 10 --debug
    python3 reproduce.py --control --runs 3     # same steps, nothing dropped: expect PASS

The image needs `java` on PATH, Kafka's jars in /opt/kafka/libs and a POSIX sh (the official
apache/kafka images are laid out so; the runs recorded in RESULTS.md used locally built
images of the same layout). The broker is started with `kafka.Kafka` directly, after
formatting its storage with `kafka.tools.StorageTool`; the entrypoint is overridden.
"""
from __future__ import annotations

import argparse
import datetime as _dt
import logging
import os
import socket
import struct
import subprocess
import sys
import tempfile
import threading
import time
import uuid

try:
    import confluent_kafka
    from confluent_kafka import Consumer, KafkaException, Producer, TopicPartition
    from confluent_kafka.admin import AdminClient, NewTopic
except ImportError as _exc:  # pragma: no cover - setup error
    print(f"setup error: confluent_kafka is not importable: {_exc}", file=sys.stderr)
    sys.exit(2)

LABEL_KEY = "repro"
LABEL_VALUE = "librdkafka-lost-commit"
CLUSTER_ID = "bG9zdC1jb21taXQtcmVwcm8"  # any 22-char base64 id
BROKER_PORT = 9092        # client listener inside the container (reached through the proxy)
INTERNAL_PORT = 9094      # the broker's own inter-broker listener (WriteTxnMarkers to itself)
CONTROLLER_PORT = 9093
PRODUCE_API_KEY = 0

REQUEST_TIMEOUT_MS = 5000     # how long librdkafka waits for the (dropped) Produce response
RETRY_BACKOFF_MS = 30000      # keeps the retry of A from going out before the abort


class SetupError(Exception):
    pass


def log(msg: str) -> None:
    stamp = _dt.datetime.now().strftime("%H:%M:%S.%f")[:-3]
    print(f"[{stamp}] {msg}", flush=True)


# --------------------------------------------------------------------------------------------
# Docker
# --------------------------------------------------------------------------------------------

def docker(*args: str, timeout: float = 120, check: bool = True) -> subprocess.CompletedProcess:
    try:
        proc = subprocess.run(["docker", *args], capture_output=True, timeout=timeout)
    except FileNotFoundError as exc:
        raise SetupError("the docker command is not on PATH") from exc
    except subprocess.TimeoutExpired as exc:
        raise SetupError(f"docker {' '.join(args[:2])} did not finish in {timeout} s") from exc
    if check and proc.returncode != 0:
        raise SetupError(f"docker {' '.join(args)} failed ({proc.returncode}): "
                         f"{proc.stderr.decode(errors='replace').strip()}")
    return proc


def remove_labelled_containers() -> None:
    ids = docker("ps", "-aq", "--filter", f"label={LABEL_KEY}={LABEL_VALUE}", timeout=60,
                 check=False).stdout.decode().split()
    if ids:
        docker("rm", "-f", "-v", *ids, timeout=120, check=False)


SERVER_PROPERTIES = """\
process.roles=broker,controller
node.id=1
controller.quorum.voters=1@localhost:{controller}
listeners=CLIENT://0.0.0.0:{client},INTERNAL://localhost:{internal},CONTROLLER://localhost:{controller}
advertised.listeners=CLIENT://127.0.0.1:{proxy},INTERNAL://localhost:{internal}
listener.security.protocol.map=CLIENT:PLAINTEXT,INTERNAL:PLAINTEXT,CONTROLLER:PLAINTEXT
inter.broker.listener.name=INTERNAL
controller.listener.names=CONTROLLER
log.dirs=/tmp/kafka-data
num.partitions=1
offsets.topic.replication.factor=1
offsets.topic.num.partitions=1
transaction.state.log.replication.factor=1
transaction.state.log.min.isr=1
transaction.state.log.num.partitions=1
group.initial.rebalance.delay.ms=0
auto.create.topics.enable=false
"""

# Broker logging to stdout (`docker logs`): log4j 1 / reload4j for 3.x, log4j2 for 4.x;
# each version reads only its own file.
LOG4J1 = """\
log4j.rootLogger=INFO, out
log4j.appender.out=org.apache.log4j.ConsoleAppender
log4j.appender.out.layout=org.apache.log4j.PatternLayout
log4j.appender.out.layout.ConversionPattern=[%d] %p %m (%c)%n
log4j.logger.kafka.request.logger=WARN
"""
LOG4J2 = """\
status = warn
appender.out.type = Console
appender.out.name = OUT
appender.out.layout.type = PatternLayout
appender.out.layout.pattern = [%d] %p %m (%c)%n
rootLogger.level = INFO
rootLogger.appenderRef.out.ref = OUT
logger.req.name = kafka.request.logger
logger.req.level = WARN
"""

START_SCRIPT = r"""
set -e
mkdir -p /tmp/kafka-conf /tmp/kafka-data
printf '%s\n' "$REPRO_SERVER_PROPERTIES" > /tmp/kafka-conf/server.properties
printf '%s\n' "$REPRO_LOG4J1" > /tmp/kafka-conf/log4j.properties
printf '%s\n' "$REPRO_LOG4J2" > /tmp/kafka-conf/log4j2.properties
LOGGING="-Dlog4j.configuration=file:/tmp/kafka-conf/log4j.properties -Dlog4j2.configurationFile=file:/tmp/kafka-conf/log4j2.properties"
java -Xmx256m $LOGGING -cp '/opt/kafka/libs/*' kafka.tools.StorageTool format \
  -t "$REPRO_CLUSTER_ID" -c /tmp/kafka-conf/server.properties
exec java -Xms256m -Xmx768m $LOGGING -cp '/opt/kafka/libs/*' kafka.Kafka /tmp/kafka-conf/server.properties
"""


class Broker:
    def __init__(self, image: str, proxy_port: int):
        self.image = image
        self.proxy_port = proxy_port
        self.name = f"lost-commit-kafka-{os.getpid()}"
        self.host_port = 0

    def start(self) -> None:
        if docker("image", "inspect", self.image, timeout=60, check=False).returncode != 0:
            raise SetupError(f"image {self.image} is not present locally (docker pull it first)")
        props = SERVER_PROPERTIES.format(client=BROKER_PORT, internal=INTERNAL_PORT,
                                         controller=CONTROLLER_PORT, proxy=self.proxy_port)
        docker("run", "-d", "--name", self.name,
               "--label", f"{LABEL_KEY}={LABEL_VALUE}",
               "-p", f"127.0.0.1::{BROKER_PORT}",
               "-e", f"REPRO_SERVER_PROPERTIES={props}",
               "-e", f"REPRO_LOG4J1={LOG4J1}",
               "-e", f"REPRO_LOG4J2={LOG4J2}",
               "-e", f"REPRO_CLUSTER_ID={CLUSTER_ID}",
               "--entrypoint", "sh",
               self.image, "-c", START_SCRIPT, timeout=120)
        out = docker("port", self.name, f"{BROKER_PORT}/tcp", timeout=30).stdout.decode().split()
        if not out:
            raise SetupError("docker did not publish the broker's port")
        self.host_port = int(out[0].rsplit(":", 1)[1])

    def running(self) -> bool:
        proc = docker("inspect", "-f", "{{.State.Running}}", self.name, timeout=30, check=False)
        return proc.stdout.decode().strip() == "true"

    def logs(self) -> str:
        proc = docker("logs", self.name, timeout=60, check=False)
        return (proc.stdout + proc.stderr).decode(errors="replace")

    def segment_bytes(self, topic: str, partition: int) -> bytes:
        proc = docker("exec", self.name, "sh", "-c",
                      f"cat /tmp/kafka-data/{topic}-{partition}/*.log", timeout=60, check=False)
        return proc.stdout if proc.returncode == 0 else b""


# --------------------------------------------------------------------------------------------
# A TCP proxy that can drop the broker's Produce responses (and only those)
# --------------------------------------------------------------------------------------------

def _recv_exact(sock: socket.socket, n: int) -> bytes | None:
    buf = bytearray()
    while len(buf) < n:
        chunk = sock.recv(n - len(buf))
        if not chunk:
            return None
        buf += chunk
    return bytes(buf)


def _read_frame(sock: socket.socket) -> bytes | None:
    """One Kafka protocol frame: 4-byte big-endian size, then that many bytes."""
    head = _recv_exact(sock, 4)
    if head is None:
        return None
    (size,) = struct.unpack(">i", head)
    if size < 0 or size > 256 * 1024 * 1024:
        return None
    body = _recv_exact(sock, size)
    return None if body is None else head + body


class Proxy:
    """Listens on 127.0.0.1:<port>, forwards to the broker. Client -> broker bytes always pass.
    Broker -> client frames pass, except Produce responses while `cut` is set: those are read
    and thrown away, so the client never learns that the broker stored the batch."""

    def __init__(self) -> None:
        self.listener = socket.socket(socket.AF_INET, socket.SOCK_STREAM)
        self.listener.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
        self.listener.bind(("127.0.0.1", 0))
        self.listener.listen(64)
        self.port = self.listener.getsockname()[1]
        self.upstream: tuple[str, int] | None = None
        self.cut = threading.Event()
        self.lock = threading.Lock()
        self.produce_requests = 0          # Produce requests seen while cut
        self.dropped: list[tuple[float, int, int]] = []   # (time, connection no, correlation id)
        self.dropped_conn_closed = threading.Event()
        self._conn_no = 0
        self._closing = False
        self._socks: set[socket.socket] = set()

    def start(self, upstream: tuple[str, int]) -> None:
        self.upstream = upstream
        threading.Thread(target=self._accept_loop, name="proxy-accept", daemon=True).start()

    def close(self) -> None:
        self._closing = True
        try:
            self.listener.close()
        except OSError:
            pass
        with self.lock:
            socks = list(self._socks)
        for s in socks:
            try:
                s.close()
            except OSError:
                pass

    def _accept_loop(self) -> None:
        while not self._closing:
            try:
                client, _ = self.listener.accept()
            except OSError:
                return
            with self.lock:
                self._conn_no += 1
                no = self._conn_no
            threading.Thread(target=self._serve, args=(client, no), name=f"proxy-{no}",
                             daemon=True).start()

    def _serve(self, client: socket.socket, no: int) -> None:
        assert self.upstream is not None
        try:
            broker = socket.create_connection(self.upstream, timeout=10)
            broker.settimeout(None)
        except OSError:
            client.close()
            return
        for s in (client, broker):
            s.setsockopt(socket.IPPROTO_TCP, socket.TCP_NODELAY, 1)
        with self.lock:
            self._socks.update((client, broker))
        pending: dict[int, int] = {}   # correlation id -> api key, for this connection
        state = {"dropped": False}
        done = threading.Event()

        def shut() -> None:
            for s in (client, broker):
                try:
                    s.shutdown(socket.SHUT_RDWR)
                except OSError:
                    pass
                try:
                    s.close()
                except OSError:
                    pass
            with self.lock:
                self._socks.discard(client)
                self._socks.discard(broker)
            if state["dropped"]:
                self.dropped_conn_closed.set()
            done.set()

        def client_to_broker() -> None:
            try:
                while True:
                    frame = _read_frame(client)
                    if frame is None:
                        break
                    if len(frame) >= 12:
                        api_key, _api_version, corr = struct.unpack(">hhi", frame[4:12])
                        with self.lock:
                            pending[corr] = api_key
                            if api_key == PRODUCE_API_KEY and self.cut.is_set():
                                self.produce_requests += 1
                    broker.sendall(frame)
            except OSError:
                pass
            shut()

        def broker_to_client() -> None:
            try:
                while True:
                    frame = _read_frame(broker)
                    if frame is None:
                        break
                    corr = struct.unpack(">i", frame[4:8])[0] if len(frame) >= 8 else -1
                    with self.lock:
                        api_key = pending.pop(corr, None)
                    if api_key == PRODUCE_API_KEY and self.cut.is_set():
                        with self.lock:
                            self.dropped.append((time.monotonic(), no, corr))
                        state["dropped"] = True
                        continue   # the broker answered; the client never hears it
                    client.sendall(frame)
            except OSError:
                pass
            shut()

        threading.Thread(target=client_to_broker, daemon=True).start()
        threading.Thread(target=broker_to_client, daemon=True).start()
        done.wait()


# --------------------------------------------------------------------------------------------
# The segment file's batch headers (record format v2), to show producer id / epoch / sequence
# --------------------------------------------------------------------------------------------

def _varint(buf: bytes, pos: int) -> tuple[int, int]:
    shift = result = 0
    while True:
        b = buf[pos]
        pos += 1
        result |= (b & 0x7F) << shift
        if not b & 0x80:
            break
        shift += 7
    return (result >> 1) ^ -(result & 1), pos


def list_batches(data: bytes) -> list[str]:
    lines = []
    pos = 0
    while pos + 61 <= len(data):
        base_offset, length = struct.unpack(">qi", data[pos:pos + 12])
        if length <= 0 or pos + 12 + length > len(data):
            break
        body = data[pos + 12:pos + 12 + length]
        (_leader_epoch, magic, _crc, attrs, last_delta, _t0, _t1, pid, pepoch, base_seq,
         count) = struct.unpack(">ibIhiqqqhii", body[:49])
        kind = "txn" if attrs & 0x10 else "   "
        desc = ""
        if magic == 2 and attrs & 0x07 == 0:
            rpos = 49
            values = []
            try:
                for _ in range(count):
                    rlen, rpos = _varint(body, rpos)
                    rec = body[rpos:rpos + rlen]
                    rpos += rlen
                    p = 1
                    _, p = _varint(rec, p)          # timestamp delta
                    _, p = _varint(rec, p)          # offset delta
                    klen, p = _varint(rec, p)
                    key = rec[p:p + klen] if klen >= 0 else None
                    p += max(klen, 0)
                    vlen, p = _varint(rec, p)
                    val = rec[p:p + vlen] if vlen >= 0 else None
                    if attrs & 0x20 and key is not None and len(key) >= 4:
                        ctype = struct.unpack(">hh", key[:4])[1]
                        values.append({0: "ABORT marker", 1: "COMMIT marker"}.get(ctype, f"control {ctype}"))
                    else:
                        values.append(repr(val.decode(errors="replace")) if val is not None else "null")
            except (IndexError, struct.error):
                values.append("(unparsed)")
            desc = ", ".join(values)
        last = base_offset + last_delta
        span = f"{base_offset}" if last == base_offset else f"{base_offset}..{last}"
        lines.append(f"offset {span:>6}  producer {pid} epoch {pepoch} seq {base_seq:>3}  {kind}  {desc}")
        pos += 12 + length
    return lines


# --------------------------------------------------------------------------------------------
# The client side
# --------------------------------------------------------------------------------------------

def client_version() -> str:
    ver = confluent_kafka.version()   # (str, int) in older releases, str in 2.16.2
    return ver[0] if isinstance(ver, tuple) else str(ver)


def lib_version() -> tuple[int, int, int]:
    ver = confluent_kafka.libversion()[0]
    parts = [int("".join(ch for ch in p if ch.isdigit()) or 0) for p in ver.split(".")[:3]]
    while len(parts) < 3:
        parts.append(0)
    return tuple(parts)  # type: ignore[return-value]


def wait_for_broker(bootstrap: str, broker: Broker, deadline_s: float = 120) -> None:
    # Until the broker listens, the proxy's upstream connection fails and the client logs
    # every retry: quiet those.
    admin = AdminClient({"bootstrap.servers": bootstrap, "log_level": 3})
    end = time.monotonic() + deadline_s
    last = ""
    while time.monotonic() < end:
        if not broker.running():
            raise SetupError("the broker container exited:\n" + broker.logs()[-3000:])
        try:
            md = admin.list_topics(timeout=5)
            if md.brokers:
                return
        except KafkaException as exc:
            last = str(exc)
        time.sleep(1)
    raise SetupError(f"the broker did not answer within {deadline_s} s ({last})")


def create_topic(bootstrap: str, topic: str) -> None:
    admin = AdminClient({"bootstrap.servers": bootstrap})
    fut = admin.create_topics([NewTopic(topic, num_partitions=1, replication_factor=1)],
                              request_timeout=30)[topic]
    fut.result(timeout=40)
    end = time.monotonic() + 30
    while time.monotonic() < end:
        md = admin.list_topics(topic, timeout=5).topics.get(topic)
        if md is not None and md.error is None and md.partitions and all(
                p.leader >= 0 for p in md.partitions.values()):
            return
        time.sleep(0.5)
    raise SetupError(f"topic {topic} has no leader after 30 s")


def read_partition(bootstrap: str, topic: str, isolation: str, timeout_s: float = 20) -> dict[int, str]:
    """offset -> value of every record a consumer with `isolation` gets from partition 0."""
    c = Consumer({"bootstrap.servers": bootstrap, "group.id": f"reader-{uuid.uuid4()}",
                  "enable.auto.commit": False, "isolation.level": isolation,
                  "enable.partition.eof": True, "auto.offset.reset": "earliest"})
    got: dict[int, str] = {}
    try:
        c.assign([TopicPartition(topic, 0, confluent_kafka.OFFSET_BEGINNING)])
        end = time.monotonic() + timeout_s
        while time.monotonic() < end:
            m = c.poll(0.5)
            if m is None:
                continue
            if m.error():
                if m.error().code() == confluent_kafka.KafkaError._PARTITION_EOF:
                    break
                continue
            got[m.offset()] = (m.value() or b"").decode(errors="replace")
    finally:
        c.close()
    return got


class ClientLog:
    """Collects librdkafka's log lines (debug=eos,msg,protocol) through a Python logger."""

    def __init__(self, path: str | None):
        self.path = path
        self.logger = logging.getLogger(f"librdkafka-{uuid.uuid4().hex[:6]}")
        self.logger.setLevel(logging.DEBUG)
        self.logger.propagate = False
        self.handler: logging.Handler | None = None
        if path:
            self.handler = logging.FileHandler(path)
            self.handler.setFormatter(logging.Formatter("%(asctime)s %(message)s"))
            self.logger.addHandler(self.handler)

    def close(self) -> None:
        if self.handler:
            self.handler.close()
            self.logger.removeHandler(self.handler)


def run_once(no: int, bootstrap: str, proxy: Proxy, broker: Broker, debug_log: str | None,
             control: bool = False) -> str:
    """One attempt. Returns "FAIL", "PASS" or "INCONCLUSIVE: why"."""
    topic = f"lost-commit-{no}-{uuid.uuid4().hex[:6]}"
    create_topic(bootstrap, topic)
    value_a = f"txn1-aborted-{no}"
    value_b = f"txn2-committed-{no}"

    conf = {
        "bootstrap.servers": bootstrap,
        "transactional.id": f"lost-commit-{uuid.uuid4()}",
        "linger.ms": 0,
        # A Produce request's timeout is socket.timeout.ms (capped by the message's remaining
        # message.timeout.ms); request.timeout.ms is only the broker-side ack timeout.
        "socket.timeout.ms": REQUEST_TIMEOUT_MS,
        "request.timeout.ms": REQUEST_TIMEOUT_MS,
        "message.timeout.ms": 90000,
        "transaction.timeout.ms": 90000,
        "retry.backoff.ms": RETRY_BACKOFF_MS,
    }
    if lib_version() >= (2, 3, 0):
        conf["retry.backoff.max.ms"] = RETRY_BACKOFF_MS  # exponential backoff since 2.3.0
    clog = ClientLog(debug_log)
    if debug_log:
        conf["debug"] = "eos,msg,protocol"
        conf["logger"] = clog.logger
    reports: dict[str, tuple[str | None, int]] = {}

    def on_delivery(err, msg) -> None:
        reports[msg.value().decode()] = (err.name() if err else None, msg.offset())

    p = Producer(conf)
    try:
        p.init_transactions(30)

        # --- txn 1: A is stored, its Produce response is dropped, then the txn is aborted.
        p.begin_transaction()
        with proxy.lock:
            proxy.dropped.clear()
            proxy.produce_requests = 0
        proxy.dropped_conn_closed.clear()
        if control:
            # Control: nothing is dropped; A is acknowledged before the abort.
            p.produce(topic, value=value_a.encode(), partition=0, on_delivery=on_delivery)
            if p.flush(30):
                return "INCONCLUSIVE: control run: A was not acknowledged within 30 s"
            log(f"run {no}: control: txn 1 produced {value_a!r}, delivery report {reports.get(value_a)}")
        else:
            proxy.cut.set()
            p.produce(topic, value=value_a.encode(), partition=0, on_delivery=on_delivery)
            log(f"run {no}: txn 1 produced {value_a!r} to {topic} [0]; dropping Produce responses")
            end = time.monotonic() + 20
            while time.monotonic() < end and not proxy.dropped:
                p.poll(0.1)
            if not proxy.dropped:
                return "INCONCLUSIVE: the broker never answered txn 1's Produce"
            log(f"run {no}: the broker answered the Produce (stored); the proxy dropped the answer")
            end = time.monotonic() + REQUEST_TIMEOUT_MS / 1000 + 15
            while time.monotonic() < end and not proxy.dropped_conn_closed.is_set():
                p.poll(0.1)
            if not proxy.dropped_conn_closed.is_set():
                return "INCONCLUSIVE: librdkafka did not time the Produce out"
            log(f"run {no}: librdkafka timed the Produce out and closed the connection")
            # Let the timed-out batch go back to the partition queue (retry in RETRY_BACKOFF_MS).
            end = time.monotonic() + 1.0
            while time.monotonic() < end:
                p.poll(0.1)
            with proxy.lock:
                retried = proxy.produce_requests - 1
            if retried > 0:
                return "INCONCLUSIVE: librdkafka retried A before the abort"
        t0 = time.monotonic()
        p.abort_transaction(30)
        p.poll(0.5)
        log(f"run {no}: abort_transaction() returned after {time.monotonic() - t0:.2f} s; "
            f"A's delivery report: {reports.get(value_a)}")
        proxy.cut.clear()
        with proxy.lock:
            retried = proxy.produce_requests - 1
        if retried > 0 and not control:
            return "INCONCLUSIVE: librdkafka retried A before the abort"

        # --- txn 2: same producer, same partition, committed.
        p.begin_transaction()
        p.produce(topic, value=value_b.encode(), partition=0, on_delivery=on_delivery)
        remaining = p.flush(30)
        if remaining:
            return f"INCONCLUSIVE: {remaining} message(s) of txn 2 undelivered after 30 s"
        try:
            p.commit_transaction(30)
        except KafkaException as exc:
            log(f"run {no}: commit_transaction() raised {exc}; the client did not claim a commit")
            return "PASS"
        log(f"run {no}: txn 2 committed; B's delivery report: {reports.get(value_b)}")
        p.poll(0.5)
    finally:
        proxy.cut.clear()
        p.flush(5)
        clog.close()

    committed = read_partition(bootstrap, topic, "read_committed")
    uncommitted = read_partition(bootstrap, topic, "read_uncommitted")
    b_err, b_offset = reports.get(value_b, ("no report", -1))
    log(f"run {no}: read_committed:   {committed}")
    log(f"run {no}: read_uncommitted: {uncommitted}")
    for line in list_batches(broker.segment_bytes(topic, 0)):
        log(f"run {no}: log  {line}")
    if b_err is not None:
        return f"INCONCLUSIVE: B's delivery report has error {b_err}"
    if committed.get(b_offset) == value_b:
        log(f"run {no}: B is at offset {b_offset} under read_committed, as reported")
        return "PASS"
    held = uncommitted.get(b_offset)
    log(f"run {no}: DEFECT: txn 2 was committed, B's delivery report says offset {b_offset}, "
        f"but read_committed has {'no record' if b_offset not in committed else repr(committed[b_offset])} "
        f"there and B is {'absent' if value_b not in committed.values() else 'elsewhere'}; "
        f"offset {b_offset} holds {held!r} (txn 1, aborted)")
    return "FAIL"


DEBUG_PATTERNS = ("ADVBASE", "PURGE", "Produce MessageSet", "MSGSET", "TXNABORT", "REQTMOUT",
                  "timed out", "DRAIN", "TXNCOMPLETE", "ProduceRequest", "ProduceResponse",
                  "EndTxn", "NEWPID", "RESETSEQ", "Transactional API called")


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--kafka-image", default="apache/kafka:4.4.0",
                    help="image with java on PATH and Kafka's jars in /opt/kafka/libs")
    ap.add_argument("--runs", type=int, default=1, help="attempts on one broker (default 1)")
    ap.add_argument("--debug", action="store_true",
                    help="librdkafka debug=eos,msg,protocol, saved to a file per run")
    ap.add_argument("--control", action="store_true",
                    help="control: the same steps without dropping any response (expect PASS)")
    ap.add_argument("--log-dir", default=None,
                    help="where --debug logs and the broker log go (default: a new temp dir)")
    args = ap.parse_args()
    if args.runs < 1 or args.runs > 100:
        ap.error("--runs must be 1..100")

    log(f"confluent-kafka {client_version()}, librdkafka {confluent_kafka.libversion()[0]}, "
        f"image {args.kafka_image}{', CONTROL (nothing dropped)' if args.control else ''}")
    log_dir = args.log_dir or tempfile.mkdtemp(prefix="lost-commit-")
    os.makedirs(log_dir, exist_ok=True)
    proxy = Proxy()
    broker = Broker(args.kafka_image, proxy.port)
    results: list[str] = []
    try:
        remove_labelled_containers()
        broker.start()
        proxy.start(("127.0.0.1", broker.host_port))
        bootstrap = f"127.0.0.1:{proxy.port}"
        log(f"broker {broker.name} published on 127.0.0.1:{broker.host_port}, proxy on {bootstrap}")
        wait_for_broker(bootstrap, broker)
        log("broker is up")
        for no in range(1, args.runs + 1):
            debug_log = os.path.join(log_dir, f"librdkafka-run{no}.log") if args.debug else None
            try:
                verdict = run_once(no, bootstrap, proxy, broker, debug_log, args.control)
            except KafkaException as exc:
                verdict = f"INCONCLUSIVE: client error {exc}"
            results.append(verdict)
            log(f"run {no}: {verdict}")
            if debug_log and os.path.exists(debug_log):
                log(f"run {no}: client log {debug_log}; the lines that matter:")
                with open(debug_log, errors="replace") as fh:
                    for line in fh:
                        if any(pat in line for pat in DEBUG_PATTERNS):
                            print("    " + line.rstrip()[:400])
    except SetupError as exc:
        log(f"setup error: {exc}")
        return 2
    finally:
        proxy.close()
        if broker.host_port:
            with open(os.path.join(log_dir, "broker.log"), "w") as fh:
                fh.write(broker.logs())
        remove_labelled_containers()
        log(f"logs in {log_dir}")

    fails = results.count("FAIL")
    passes = results.count("PASS")
    other = len(results) - fails - passes
    print(f"runs {len(results)}: FAIL {fails}, PASS {passes}, inconclusive {other}")
    if fails:
        print("FAIL")
        return 1
    if passes:
        print("PASS")
        return 0
    print("setup error: no run reached a verdict")
    return 2


if __name__ == "__main__":
    sys.exit(main())
