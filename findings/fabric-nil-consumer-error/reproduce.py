#!/usr/bin/env python3
"""Reproducer: Fabric's Kafka-based orderer dereferences a nil consumer error after an offset
goes out of range.

When a channel's partition consumer gets ErrOffsetOutOfRange, sarama 1.20.1 sends that error
and then closes the consumer's Errors() and Messages() channels. Fabric's consumption loop
(processMessagesToBlocks) marks the error unrecoverable and closes its errorChan; but if a
fetched message is still buffered, processing it re-opens errorChan ("Marked consenter as
available again"), and the next receive from the closed Errors() channel yields a nil
*sarama.ConsumerError whose .Err the loop reads: SIGSEGV, the whole orderer exits.

How this script makes that deterministic (one orderer, one Kafka broker):
 1. The orderer's system channel (OrdererType kafka, MaxMessageCount 1, so every message
    becomes a block written to the ledger) starts and catches up with its partition.
 2. The orderer is frozen (docker pause) while a helper writes a backlog of BACKLOG regular
    (NORMAL) Kafka messages of SIZE bytes straight into the channel's partition.
 3. The orderer is thawed: sarama fetches ahead into its 256-message buffer while Fabric
    writes one block per message, far slower. After DELAY seconds the helper deletes the
    partition's records up to the high watermark (DeleteRecords), as retention or an operator
    would. The consumer's next fetch is below the log start offset: OFFSET_OUT_OF_RANGE, with
    ~256 messages still buffered.
An unclean leader election that truncates the partition under the orderer gives the same
sarama error through the same code; DeleteRecords needs one broker and no timing of failovers.

Verdict per run:
  FAIL  the orderer exited with a Go panic after the out-of-range error (the defect);
  PASS  the orderer logged the unrecoverable out-of-range error, processed at least one
        buffered message after it (the condition of the race), and was still running 10 s
        later (the channel halts, as designed);
  setup error otherwise (e.g. the out-of-range error never came, or came with an empty buffer).
Exit status: 1 if any run FAILed, else 2 if any run had a setup error, else 0.

Requirements: Python 3.11 (standard library only) and the `docker` command line. The helper
that speaks Kafka's wire protocol runs this same standard-library code in a container of
--python-image on the cluster's network. Everything the script creates carries the label
ordeal-finding=fabric-nil-consumer-error and is removed at the start and at the end of each
run. Containers use one Docker network created with --internal; no port is published.

Usage:
  python3 reproduce.py [--orderer-image IMG] [--kafka-image IMG] [--python-image IMG]
                       [--tools DIR|IMG] [--runs N] [--backlog N] [--size BYTES] [--delay S]
"""
from __future__ import annotations

import argparse
import base64
import json
import os
import re
import shutil
import subprocess
import sys
import tempfile
import threading
import time
import uuid

LABEL_KEY = "ordeal-finding"
LABEL_VALUE = "fabric-nil-consumer-error"
LABEL = f"{LABEL_KEY}={LABEL_VALUE}"
PREFIX = "ofnc"
NETWORK = f"{PREFIX}-net"
ORDERER = f"{PREFIX}-orderer"
KAFKA = f"{PREFIX}-kafka"
HELPER = f"{PREFIX}-client"
CHANNEL = "syschannel"
OPS_PORT = 8443


class SetupError(Exception):
    pass


# ---------------------------------------------------------------------------------------------
# docker helpers

def run(cmd: list[str], timeout: float = 60, check: bool = True, input: str | None = None,
        ) -> subprocess.CompletedProcess:
    try:
        done = subprocess.run(cmd, capture_output=True, text=True, timeout=timeout, input=input)
    except subprocess.TimeoutExpired as e:
        raise SetupError(f"timed out after {timeout}s: {' '.join(cmd[:6])} ...") from e
    if check and done.returncode != 0:
        raise SetupError(f"{' '.join(cmd[:6])} ... exited {done.returncode}: "
                         f"{(done.stderr or done.stdout).strip()[-800:]}")
    return done


def docker(*args: str, timeout: float = 60, check: bool = True, input: str | None = None,
           ) -> subprocess.CompletedProcess:
    return run(["docker", *args], timeout=timeout, check=check, input=input)


def cleanup() -> None:
    """Remove every container, network and volume carrying this script's label."""
    ids = docker("ps", "-aq", "--filter", f"label={LABEL}", check=False).stdout.split()
    if ids:
        docker("rm", "-f", "-v", *ids, timeout=120, check=False)
    nets = docker("network", "ls", "-q", "--filter", f"label={LABEL}", check=False).stdout.split()
    if nets:
        docker("network", "rm", *nets, check=False)
    vols = docker("volume", "ls", "-q", "--filter", f"label={LABEL}", check=False).stdout.split()
    if vols:
        docker("volume", "rm", "-f", *vols, check=False)


def image_present(image: str) -> bool:
    return docker("image", "inspect", image, check=False).returncode == 0


ANSI = re.compile(r"\x1b\[[0-9;]*m")


def logs(name: str) -> str:
    """The container's log (stdout and stderr), without Fabric's color codes."""
    done = docker("logs", name, timeout=60, check=False)
    return ANSI.sub("", done.stdout + done.stderr)


def state(name: str) -> tuple[str, int]:
    done = docker("inspect", "-f", "{{.State.Status}} {{.State.ExitCode}}", name, check=False)
    if done.returncode != 0:
        return "missing", -1
    status, code = done.stdout.split()
    return status, int(code)


def wait_log(name: str, pattern: str, timeout: float) -> bool:
    """Wait until the container's log matches pattern; False on timeout or if it exited."""
    deadline = time.monotonic() + timeout
    rx = re.compile(pattern)
    while time.monotonic() < deadline:
        if rx.search(logs(name)):
            return True
        if state(name)[0] != "running":
            return bool(rx.search(logs(name)))
        time.sleep(1)
    return False


# ---------------------------------------------------------------------------------------------
# material: one orderer org, genesis block of a system channel with OrdererType kafka

CRYPTO_CONFIG = """\
OrdererOrgs:
  - Name: Orderer
    Domain: example.com
    Specs:
      - Hostname: orderer
"""

CONFIGTX = """\
Organizations:
  - &OrdererOrg
    Name: OrdererOrg
    ID: OrdererMSP
    MSPDir: crypto/ordererOrganizations/example.com/msp
    Policies:
      Readers: {Type: Signature, Rule: "OR('OrdererMSP.member')"}
      Writers: {Type: Signature, Rule: "OR('OrdererMSP.member')"}
      Admins: {Type: Signature, Rule: "OR('OrdererMSP.admin')"}
    OrdererEndpoints: ["orderer:7050"]
Profiles:
  KafkaSystemChannel:
    Capabilities: {V2_0: true}
    Policies:
      Readers: {Type: ImplicitMeta, Rule: "ANY Readers"}
      Writers: {Type: ImplicitMeta, Rule: "ANY Writers"}
      Admins: {Type: ImplicitMeta, Rule: "MAJORITY Admins"}
    Orderer:
      OrdererType: kafka
      BatchTimeout: 2s
      BatchSize: {MaxMessageCount: 1, AbsoluteMaxBytes: 10 MB, PreferredMaxBytes: 2 MB}
      Kafka: {Brokers: ["kafka:9092"]}
      Organizations: [*OrdererOrg]
      Capabilities: {V2_0: true}
      Policies:
        Readers: {Type: ImplicitMeta, Rule: "ANY Readers"}
        Writers: {Type: ImplicitMeta, Rule: "ANY Writers"}
        Admins: {Type: ImplicitMeta, Rule: "MAJORITY Admins"}
        BlockValidation: {Type: ImplicitMeta, Rule: "ANY Writers"}
    Consortiums:
      SampleConsortium:
        Organizations: [*OrdererOrg]
"""

GEN_COMMANDS = ("cryptogen generate --config crypto-config.yaml --output crypto && "
                f"configtxgen -configPath . -profile KafkaSystemChannel -channelID {CHANNEL} "
                "-outputBlock genesis.block")


def make_material(work: str, tools: str) -> None:
    with open(os.path.join(work, "crypto-config.yaml"), "w") as f:
        f.write(CRYPTO_CONFIG)
    with open(os.path.join(work, "configtx.yaml"), "w") as f:
        f.write(CONFIGTX)
    if os.path.isdir(tools):
        env = dict(os.environ, PATH=os.path.abspath(tools) + os.pathsep + os.environ.get("PATH", ""))
        try:
            done = subprocess.run(["sh", "-c", GEN_COMMANDS], cwd=work, env=env, capture_output=True,
                                  text=True, timeout=120)
        except subprocess.TimeoutExpired as e:
            raise SetupError("cryptogen/configtxgen timed out") from e
        if done.returncode != 0:
            raise SetupError(f"cryptogen/configtxgen failed: {done.stderr.strip()[-800:]}")
    else:
        docker("run", "--rm", "--label", LABEL, "--network", "none",
               "--user", f"{os.getuid()}:{os.getgid()}", "-v", f"{work}:/work", "-w", "/work",
               "--entrypoint", "sh", tools, "-c", GEN_COMMANDS, timeout=180)
    if not os.path.isfile(os.path.join(work, "genesis.block")):
        raise SetupError("configtxgen wrote no genesis.block")
    # The orderer image may run as any user: make the (throw-away) material readable.
    for root, dirs, files in os.walk(work):
        for d in dirs:
            os.chmod(os.path.join(root, d), 0o755)
        for f in files:
            os.chmod(os.path.join(root, f), 0o644)
    os.chmod(work, 0o755)


# ---------------------------------------------------------------------------------------------
# containers

KAFKA_SCRIPT = r"""
set -e
d=/tmp/kraft
mkdir -p $d/data
cat > $d/server.properties <<EOF
process.roles=broker,controller
node.id=1
controller.quorum.voters=1@kafka:9093
listeners=PLAINTEXT://:9092,CONTROLLER://:9093
advertised.listeners=PLAINTEXT://kafka:9092
controller.listener.names=CONTROLLER
inter.broker.listener.name=PLAINTEXT
listener.security.protocol.map=PLAINTEXT:PLAINTEXT,CONTROLLER:PLAINTEXT
log.dirs=$d/data
num.partitions=1
default.replication.factor=1
offsets.topic.replication.factor=1
transaction.state.log.replication.factor=1
transaction.state.log.min.isr=1
log.retention.ms=-1
EOF
cat > $d/log4j.properties <<EOF
log4j.rootLogger=INFO, stdout
log4j.appender.stdout=org.apache.log4j.ConsoleAppender
log4j.appender.stdout.layout=org.apache.log4j.PatternLayout
log4j.appender.stdout.layout.ConversionPattern=[%d] %p %m (%c)%n
log4j.logger.kafka.request.logger=WARN
log4j.logger.state.change.logger=WARN
EOF
java=$(command -v java || echo "${JAVA_HOME:-/opt/java/openjdk}/bin/java")
"$java" -Xmx256m -cp '/opt/kafka/libs/*' kafka.tools.StorageTool format -t "$CLUSTER_ID" -c $d/server.properties
exec "$java" -Xmx512m -Xms512m -Dlog4j.configuration=file:$d/log4j.properties -cp '/opt/kafka/libs/*' kafka.Kafka $d/server.properties
"""


def start_kafka(image: str) -> None:
    """A single KRaft node (broker and controller in one JVM), reachable as kafka:9092."""
    cluster_id = "-"
    while cluster_id.startswith("-"):  # kafka-storage would take a leading '-' for an option
        cluster_id = base64.urlsafe_b64encode(uuid.uuid4().bytes).decode().rstrip("=")
    docker("run", "-d", "--name", KAFKA, "--label", LABEL, "--network", NETWORK,
           "--network-alias", "kafka", "--hostname", "kafka", "-e", f"CLUSTER_ID={cluster_id}",
           "--entrypoint", "sh", image, "-c", KAFKA_SCRIPT)
    if not wait_log(KAFKA, r"Kafka Server started", 180):
        raise SetupError("Kafka did not start within 180 s:\n" + tail(logs(KAFKA), 15))


def start_orderer(image: str, work: str) -> None:
    env = {
        "FABRIC_LOGGING_SPEC": "info",
        "ORDERER_GENERAL_LISTENADDRESS": "0.0.0.0",
        "ORDERER_GENERAL_BOOTSTRAPMETHOD": "file",
        "ORDERER_GENERAL_BOOTSTRAPFILE": "/material/genesis.block",
        "ORDERER_GENERAL_LOCALMSPID": "OrdererMSP",
        "ORDERER_GENERAL_LOCALMSPDIR":
            "/material/crypto/ordererOrganizations/example.com/orderers/orderer.example.com/msp",
        "ORDERER_OPERATIONS_LISTENADDRESS": f"0.0.0.0:{OPS_PORT}",
        "ORDERER_KAFKA_VERSION": "1.0.0",
        "ORDERER_KAFKA_TOPIC_REPLICATIONFACTOR": "1",
        "ORDERER_KAFKA_RETRY_SHORTINTERVAL": "1s",
    }
    args = ["run", "-d", "--name", ORDERER, "--label", LABEL, "--network", NETWORK,
            "--network-alias", "orderer", "--hostname", "orderer",
            "-v", f"{work}:/material:ro"]
    for k, v in env.items():
        args += ["-e", f"{k}={v}"]
    docker(*args, image, "orderer")


# ---------------------------------------------------------------------------------------------
# verdict helpers

def tail(text: str, n: int) -> str:
    return "\n".join(text.rstrip().splitlines()[-n:])


def panic_excerpt(text: str, frames: int = 8) -> str:
    """The panic line, the goroutine header and the stack's top frames (function + file:line)."""
    lines = text.splitlines()
    start = next((i for i, l in enumerate(lines) if l.startswith("panic:")), None)
    if start is None:
        return tail(text, 20)
    out = lines[start:start + 4]
    i = start + 4
    taken = 0
    while i < len(lines) and taken < frames * 2:
        out.append(lines[i])
        taken += 1
        i += 1
    return "\n".join(out)

# ---------------------------------------------------------------------------------------------
# The Kafka client helper: runs in a container on the cluster network (python3 - < this).
# Produce v2 (message format v1, CRC32), ListOffsets v1 and DeleteRecords v0; nothing else.

KAFKA_CLIENT = r'''
import json, socket, struct, sys, time, uuid, zlib

host, port, topic = sys.argv[1], int(sys.argv[2]), sys.argv[3]
count, size = int(sys.argv[4]), int(sys.argv[5])

def say(**kw):
    print(json.dumps(kw), flush=True)

def varint(n):
    out = bytearray()
    while True:
        b = n & 0x7F
        n >>= 7
        if n:
            out.append(b | 0x80)
        else:
            out.append(b)
            return bytes(out)

def pb_bytes(field, data):
    return varint(field << 3 | 2) + varint(len(data)) + data

def pb_varint(field, n):
    return varint(field << 3) + varint(n)

def fabric_message(filler):
    # orderer.KafkaMessage{regular: KafkaMessageRegular{payload: Envelope, config_seq: 0,
    # class: NORMAL}}; the Envelope carries a channel header (ENDORSER_TRANSACTION, channel
    # id, tx id) so the ledger can index it. Unsigned: the Kafka chain re-validates a NORMAL
    # message only when the channel's config sequence has advanced since it was ordered.
    chdr = pb_varint(1, 3) + pb_bytes(4, topic.encode()) + pb_bytes(5, uuid.uuid4().hex.encode())
    payload = pb_bytes(1, pb_bytes(1, chdr)) + pb_bytes(2, filler)
    regular = pb_bytes(1, pb_bytes(1, payload)) + pb_varint(3, 1)
    return pb_bytes(1, regular)

def kstr(s):
    b = s.encode()
    return struct.pack(">h", len(b)) + b

class Conn:
    def __init__(self):
        deadline = time.monotonic() + 60
        while True:
            try:
                self.s = socket.create_connection((host, port), timeout=30)
                break
            except OSError:
                if time.monotonic() > deadline:
                    raise
                time.sleep(1)
        self.cid = 0

    def recvn(self, n):
        buf = bytearray()
        while len(buf) < n:
            chunk = self.s.recv(n - len(buf))
            if not chunk:
                raise EOFError("connection closed by broker")
            buf += chunk
        return bytes(buf)

    def call(self, api_key, version, body):
        self.cid += 1
        msg = struct.pack(">hhi", api_key, version, self.cid) + kstr("ordeal-finding") + body
        self.s.sendall(struct.pack(">i", len(msg)) + msg)
        n = struct.unpack(">i", self.recvn(4))[0]
        data = self.recvn(n)
        if struct.unpack(">i", data[:4])[0] != self.cid:
            raise RuntimeError("correlation id mismatch")
        return data[4:]

class Reader:
    def __init__(self, b):
        self.b, self.i = b, 0
    def take(self, fmt):
        v = struct.unpack_from(fmt, self.b, self.i)
        self.i += struct.calcsize(fmt)
        return v[0]
    def string(self):
        n = self.take(">h")
        s = self.b[self.i:self.i + n].decode()
        self.i += n
        return s

def one_partition(body_of_partition):
    return struct.pack(">i", 1) + kstr(topic) + struct.pack(">i", 1) + body_of_partition

def list_offset(conn, ts):
    body = struct.pack(">i", -1) + one_partition(struct.pack(">iq", 0, ts))
    r = Reader(conn.call(2, 1, body))
    r.take(">i"); r.string(); r.take(">i"); r.take(">i")
    err = r.take(">h"); r.take(">q"); off = r.take(">q")
    return err, off

def produce(conn, values):
    ts = int(time.time() * 1000)
    msgset = bytearray()
    for i, v in enumerate(values):
        m = struct.pack(">bbq", 1, 0, ts) + struct.pack(">i", -1) + struct.pack(">i", len(v)) + v
        m = struct.pack(">I", zlib.crc32(m) & 0xFFFFFFFF) + m
        msgset += struct.pack(">qi", i, len(m)) + m
    part = struct.pack(">i", 0) + struct.pack(">i", len(msgset)) + bytes(msgset)
    body = struct.pack(">hi", -1, 30000) + one_partition(part)
    r = Reader(conn.call(0, 2, body))
    r.take(">i"); r.string(); r.take(">i"); r.take(">i")
    err = r.take(">h"); base = r.take(">q")
    return err, base

def delete_records(conn, offset):
    body = one_partition(struct.pack(">iq", 0, offset)) + struct.pack(">i", 30000)
    r = Reader(conn.call(21, 0, body))
    r.take(">i"); r.take(">i"); r.string(); r.take(">i"); r.take(">i")
    low = r.take(">q"); err = r.take(">h")
    return err, low

conn = Conn()
err, start = list_offset(conn, -1)
say(step="before", error=err, high_watermark=start)
if err:
    sys.exit(3)
filler = b"o" * size
per_request = max(1, 900000 // (size + 200))
sent, first, t0 = 0, None, time.monotonic()
while sent < count:
    n = min(per_request, count - sent)
    err, base = produce(conn, [fabric_message(filler) for _ in range(n)])
    if err:
        say(step="produce", error=err)
        sys.exit(3)
    first = base if first is None else first
    sent += n
err, hw = list_offset(conn, -1)
say(step="produced", count=sent, first_offset=first, high_watermark=hw,
    seconds=round(time.monotonic() - t0, 3))
# Wait for the go-ahead (the orderer thawed and DELAY elapsed), then delete everything.
sys.stdin.readline()
err, low = delete_records(conn, -1)
say(step="deleted", error=err, low_watermark=low, at=time.time())
sys.exit(3 if err else 0)
'''


class Helper:
    """The client container, driven over its stdin and stdout."""

    def __init__(self, image: str, backlog: int, size: int):
        cmd = ["docker", "run", "-i", "--rm", "--name", HELPER, "--label", LABEL,
               "--network", NETWORK, "--entrypoint", "python3", image, "-c", KAFKA_CLIENT,
               "kafka", "9092", CHANNEL, str(backlog), str(size)]
        self.p = subprocess.Popen(cmd, stdin=subprocess.PIPE, stdout=subprocess.PIPE,
                                  stderr=subprocess.PIPE, text=True)

    def read(self, step: str, timeout: float) -> dict:
        """The helper's next JSON line for `step`; a watchdog removes the helper's container
        after `timeout` seconds, which ends a blocked readline() with end of file."""
        watchdog = threading.Timer(timeout, self.kill)
        watchdog.start()
        try:
            while True:
                line = self.p.stdout.readline()
                if not line:
                    break
                msg = json.loads(line)
                if msg.get("step") == step:
                    return msg
        finally:
            watchdog.cancel()
        self.kill()
        raise SetupError(f"the Kafka client gave no '{step}' step: {self.p.stderr.read()[-800:]}")

    def go(self) -> None:
        self.p.stdin.write("go\n")
        self.p.stdin.flush()

    def kill(self) -> None:
        if self.p.poll() is None:
            docker("rm", "-f", HELPER, check=False)
            try:
                self.p.wait(timeout=30)
            except subprocess.TimeoutExpired:
                self.p.kill()


def count(pattern: str, text: str) -> int:
    return len(re.findall(pattern, text))


def one_run(args: argparse.Namespace, n: int) -> tuple[str, dict]:
    print(f"--- run {n}: orderer {args.orderer_image}, kafka {args.kafka_image}", flush=True)
    cleanup()
    work = tempfile.mkdtemp(prefix="ordeal-finding-nilerr-")
    facts: dict = {}
    helper = None
    paused = False
    try:
        make_material(work, args.tools)
        docker("network", "create", "--internal", "--label", LABEL, NETWORK)
        start_kafka(args.kafka_image)
        start_orderer(args.orderer_image, work)
        if not wait_log(ORDERER, rf"\[channel: {CHANNEL}\] Start phase completed successfully", 180):
            raise SetupError("the orderer's chain did not start:\n" + tail(logs(ORDERER), 15))
        time.sleep(2)  # the CONNECT message is consumed; the consumer polls at the log's end
        docker("pause", ORDERER)
        paused = True
        helper = Helper(args.python_image, args.backlog, args.size)
        before = helper.read("before", 90)
        produced = helper.read("produced", 180)
        print(f"orderer paused; wrote {produced['count']} messages of {args.size} B at offsets "
              f"{produced['first_offset']}..{produced['high_watermark'] - 1} "
              f"({produced['seconds']} s; partition end was {before['high_watermark']})", flush=True)
        docker("unpause", ORDERER)
        paused = False
        t_unpause = time.time()
        time.sleep(args.delay)
        helper.go()
        deleted = helper.read("deleted", 60)
        facts.update(backlog=produced["count"], low_watermark=deleted["low_watermark"],
                     delete_after=round(deleted["at"] - t_unpause, 3))
        print(f"orderer thawed; {facts['delete_after']} s later deleted the records below "
              f"{deleted['low_watermark']} (DeleteRecords, error code {deleted['error']})", flush=True)
        # Watch the orderer: the out-of-range error, then a panic or a halted channel.
        deadline = time.monotonic() + args.watch
        oor_seen_at = None
        while time.monotonic() < deadline:
            st, code = state(ORDERER)
            text = logs(ORDERER)
            if st != "running":
                break
            if oor_seen_at is None and "Unrecoverable error during consumption" in text:
                oor_seen_at = time.monotonic()
            if oor_seen_at is not None and time.monotonic() - oor_seen_at >= 10:
                break
            time.sleep(0.5)
        st, code = state(ORDERER)
        text = logs(ORDERER)
        after = text.split("Unrecoverable error during consumption", 1)
        tail_text = after[1] if len(after) > 1 else ""
        facts.update(
            out_of_range="Unrecoverable error during consumption" in text,
            nil_errors_read=count(r"Error during consumption: <nil>", tail_text),
            marked_available_after_oor=count(r"Marked consenter as available again", tail_text),
            consumer_closed="Kafka consumer closed." in tail_text,
            exit_code=code if st != "running" else None)
        if st != "running":
            if "panic:" in text:
                print(f"FAIL: the orderer exited (code {code}) after the out-of-range error "
                      f"(after it: {facts['marked_available_after_oor']} x 'Marked consenter as "
                      f"available again', {facts['nil_errors_read']} x 'Error during consumption: <nil>')")
                for line in text.splitlines():
                    if re.search(r"Error during consumption|Unrecoverable|Closed the errorChan|"
                                 r"Marked consenter as available", line):
                        print("  " + line.strip()[:300])
                        if line.count("<nil>"):
                            break
                print(panic_excerpt(text))
                return "FAIL", facts
            raise SetupError(f"the orderer exited (code {code}) without a panic:\n{tail(text, 20)}")
        if not facts["out_of_range"]:
            raise SetupError("no out-of-range error within the watch (the orderer caught up before "
                             "the delete?); try a larger --backlog or a smaller --delay:\n"
                             + tail(text, 10))
        if not facts["marked_available_after_oor"]:
            raise SetupError("inconclusive: no buffered message was processed after the out-of-range "
                             "error (the fetch came before the backlog reached the buffer?); try a "
                             "larger --delay")
        print(f"PASS: the orderer logged the out-of-range error and is still running 10 s later "
              f"(after it: {facts['marked_available_after_oor']} x 'Marked consenter as available "
              f"again', {facts['nil_errors_read']} nil errors logged, consumer closed: "
              f"{facts['consumer_closed']})")
        return "PASS", facts
    finally:
        if paused:
            docker("unpause", ORDERER, check=False)
        if helper is not None:
            helper.kill()
        if args.keep:
            print(f"(--keep: containers left running; material in {work})")
        else:
            cleanup()
            shutil.rmtree(work, ignore_errors=True)


def main() -> int:
    p = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    p.add_argument("--orderer-image", default="hyperledger/fabric-orderer:2.5.16")
    p.add_argument("--kafka-image", default="apache/kafka:3.9.1",
                   help="an image with Java on PATH and Kafka's jars in /opt/kafka/libs (Kafka 3.x)")
    p.add_argument("--python-image", default="python:3.11-slim",
                   help="any image with python3 on PATH, for the Kafka client helper")
    p.add_argument("--tools", default="hyperledger/fabric-tools:2.5.16",
                   help="a folder holding cryptogen and configtxgen, or an image that has them")
    p.add_argument("--runs", type=int, default=1)
    p.add_argument("--backlog", type=int, default=3000, help="messages written while paused")
    p.add_argument("--size", type=int, default=10000, help="filler bytes per message")
    p.add_argument("--delay", type=float, default=0.3, help="seconds from thaw to DeleteRecords")
    p.add_argument("--watch", type=float, default=90, help="seconds to watch the orderer")
    p.add_argument("--keep", action="store_true", help="leave the last run's containers up")
    args = p.parse_args()
    images = [args.orderer_image, args.kafka_image, args.python_image]
    images += [] if os.path.isdir(args.tools) else [args.tools]
    missing = [i for i in images if not image_present(i)]
    if missing:
        print(f"setup error: image(s) not present locally: {', '.join(missing)} (docker pull them)")
        return 2
    results = []
    for n in range(1, max(1, args.runs) + 1):
        try:
            verdict, facts = one_run(args, n)
            print(f"facts: {json.dumps(facts)}")
            results.append(verdict)
        except SetupError as e:
            print(f"setup error: {e}")
            results.append("ERROR")
        except KeyboardInterrupt:
            cleanup()
            raise
    fails, passes, errors = (results.count(r) for r in ("FAIL", "PASS", "ERROR"))
    print(f"=== {len(results)} run(s): {fails} FAIL, {passes} PASS, {errors} setup error(s)")
    if fails:
        print("FAIL")
        return 1
    if errors:
        return 2
    print("PASS")
    return 0


if __name__ == "__main__":
    sys.exit(main())
