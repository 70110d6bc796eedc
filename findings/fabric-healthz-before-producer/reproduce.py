#!/usr/bin/env python3
"""Reproducer: Fabric's Kafka-based orderer panics on GET /healthz before its chain has a producer.

One orderer (system channel, OrdererType kafka) is started while its Kafka broker does not
exist yet, so the Kafka chain's start goroutine is still retrying and `chain.producer` is nil.
A single GET of the operations endpoint's /healthz then runs the chain's HealthCheck, which
calls `chain.producer.SendMessage`: nil pointer dereference in a goroutine of the health
handler, and the whole orderer process exits.

Verdict per run:
  FAIL  the orderer exited with a Go panic after the probe (the defect);
  PASS  the orderer answered the probe (503, the chain unhealthy) and stayed up, and after the
        broker was started it became healthy (200);
  setup error otherwise (material, images, timeouts).
Exit status: 1 if any run FAILed, else 2 if any run had a setup error, else 0.

Requirements: Python 3.11 (standard library only) and the `docker` command line. Everything
the script creates carries the label ordeal-finding=fabric-healthz and is removed at the start
and at the end of each run. Containers use one Docker network created with --internal; no
port is published.

Usage:
  python3 reproduce.py [--orderer-image IMG] [--kafka-image IMG] [--tools DIR|IMG] [--runs N]
"""
from __future__ import annotations

import argparse
import base64
import os
import re
import shutil
import subprocess
import sys
import tempfile
import time
import uuid

LABEL_KEY = "ordeal-finding"
LABEL_VALUE = "fabric-healthz"
LABEL = f"{LABEL_KEY}={LABEL_VALUE}"
PREFIX = "ofhz"
NETWORK = f"{PREFIX}-net"
ORDERER = f"{PREFIX}-orderer"
KAFKA = f"{PREFIX}-kafka"
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
      BatchSize: {MaxMessageCount: 10, AbsoluteMaxBytes: 10 MB, PreferredMaxBytes: 2 MB}
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


# The probe runs inside the orderer's container (no port is published): bash's /dev/tcp where
# the image has bash, else wget or curl.
PROBE = r"""
if command -v bash >/dev/null 2>&1; then
  exec bash -c 'exec 3<>/dev/tcp/127.0.0.1/PORT || exit 97
    printf "GET /healthz HTTP/1.1\r\nHost: localhost\r\nConnection: close\r\n\r\n" >&3
    cat <&3'
elif command -v wget >/dev/null 2>&1; then
  exec wget -S -q -O - -T 10 http://127.0.0.1:PORT/healthz 2>&1
elif command -v curl >/dev/null 2>&1; then
  exec curl -s -i -m 10 http://127.0.0.1:PORT/healthz
fi
exit 98
""".replace("PORT", str(OPS_PORT))


def probe() -> tuple[int | None, str]:
    """GET /healthz; (HTTP status or None, response text)."""
    try:
        done = subprocess.run(["docker", "exec", ORDERER, "sh", "-c", PROBE], capture_output=True,
                              text=True, timeout=40)
    except subprocess.TimeoutExpired:
        return None, "probe timed out after 40 s"
    out = done.stdout + done.stderr
    m = re.search(r"HTTP/1\.[01] (\d{3})", out)
    return (int(m.group(1)) if m else None), out.strip()


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


def one_run(args: argparse.Namespace, n: int) -> str:
    print(f"--- run {n}: orderer {args.orderer_image}, kafka {args.kafka_image}", flush=True)
    cleanup()
    work = tempfile.mkdtemp(prefix="ordeal-finding-healthz-")
    try:
        make_material(work, args.tools)
        docker("network", "create", "--internal", "--label", LABEL, NETWORK)
        # 1. The orderer starts while no broker exists: "kafka" does not even resolve.
        start_orderer(args.orderer_image, work)
        if not wait_log(ORDERER, rf"\[channel: {CHANNEL}\] Starting chain with last persisted offset", 90):
            raise SetupError("the orderer did not create its Kafka chain:\n" + tail(logs(ORDERER), 15))
        # Let the operations endpoint come up (it answers once the chain is registered too).
        time.sleep(3)
        if re.search(rf"\[channel: {CHANNEL}\] Producer set up successfully", logs(ORDERER)):
            raise SetupError("the chain already has a producer: Kafka was reachable")
        print("orderer up, Kafka unreachable, chain without producer; GET /healthz ...", flush=True)
        status, body = probe()
        time.sleep(3)
        st, code = state(ORDERER)
        text = logs(ORDERER)
        if st != "running":
            if "panic:" in text:
                print(f"FAIL: the orderer exited (code {code}) after GET /healthz "
                      f"(probe answer: {status or body[:80]!r})")
                for line in text.splitlines():
                    if "[orderer.consensus.kafka]" in line or "Beginning to serve" in line:
                        print("  " + line.strip()[:300])
                print(panic_excerpt(text))
                return "FAIL"
            raise SetupError(f"the orderer exited (code {code}) without a panic:\n{tail(text, 20)}")
        if status is None:
            raise SetupError(f"/healthz gave no HTTP answer: {body[-300:]!r}")
        first = body.splitlines()[0] if body else ""
        print(f"orderer alive; /healthz answered {status}: {first}")
        m = re.search(r"\{.*\}", body, re.S)
        if m:
            print(f"  body: {m.group(0)[:300]}")
        if status == 200:
            raise SetupError("/healthz answered 200 while Kafka is unreachable: the check did not run")
        # 2. Bring the broker up: the chain completes its start and the check passes.
        start_kafka(args.kafka_image)
        if not wait_log(ORDERER, rf"\[channel: {CHANNEL}\] Start phase completed successfully", 180):
            st, code = state(ORDERER)
            raise SetupError(f"the chain did not start after Kafka came up (orderer {st}):\n"
                             f"{tail(logs(ORDERER), 15)}")
        status2, body2 = probe()
        time.sleep(1)
        st, code = state(ORDERER)
        text = logs(ORDERER)
        if st != "running":
            if "panic:" in text:
                print(f"FAIL: the orderer exited (code {code}) after the second GET /healthz")
                print(panic_excerpt(text))
                return "FAIL"
            raise SetupError(f"the orderer exited (code {code}):\n{tail(text, 20)}")
        print(f"Kafka up, chain started; /healthz answered {status2}")
        if status2 != 200:
            raise SetupError(f"/healthz answered {status2} with Kafka up: {body2[-300:]!r}")
        print("PASS: /healthz reported the chain unhealthy without crashing, then healthy")
        return "PASS"
    finally:
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
    p.add_argument("--tools", default="hyperledger/fabric-tools:2.5.16",
                   help="a folder holding cryptogen and configtxgen, or an image that has them")
    p.add_argument("--runs", type=int, default=1)
    p.add_argument("--keep", action="store_true", help="leave the last run's containers up")
    args = p.parse_args()
    images = [args.orderer_image, args.kafka_image] + ([] if os.path.isdir(args.tools) else [args.tools])
    missing = [i for i in images if not image_present(i)]
    if missing:
        print(f"setup error: image(s) not present locally: {', '.join(missing)} (docker pull them)")
        return 2
    results = []
    for n in range(1, max(1, args.runs) + 1):
        try:
            results.append(one_run(args, n))
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
