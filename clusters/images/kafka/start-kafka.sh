#!/bin/sh
# The cluster passes server.properties in ORDEAL_CONFIG; writing it at every start keeps
# a restarted container on the same settings. The same image runs ZooKeeper-mode brokers and
# KRaft brokers and controllers (process.roles in the config).
#
# KRaft (ORDEAL_CLUSTER_ID set): a log directory must be formatted with the cluster's id
# before the first start (kafka-storage format; for a controller it also writes the
# bootstrap metadata: metadata.version and the feature levels of the release). It is
# formatted when it holds no meta.properties: at the first start, and after a disk-loss
# fault emptied it, as an operator formats a replaced disk. A formatted directory is never touched again.
#
# Kafka fails fast at startup: a broker started again right after a SIGKILL finds its old
# registration in ZooKeeper (/brokers/ids/N) alive until that session expires and exits with
# NodeExistsException; one whose ZooKeeper session expires while it loads its logs (slow under
# pauses) exits with SessionExpiredException. A supervisor such as systemd starts it again;
# so does this script, for an exit before the node served (its first listener never open: Kafka
# opens its listeners at the end of its startup), at most 15 times in a row. An exit after it
# served is a crash: the container ends, and the run's crash watch reports it.
set -e
mkdir -p /etc/ordeal /var/lib/kafka/data
printf '%s\n' "$ORDEAL_CONFIG" > /etc/ordeal/server.properties
logging="-Dlog4j.configuration=file:/opt/ordeal/log4j.properties -Dlog4j2.configurationFile=file:/opt/ordeal/log4j2.properties"
if [ -n "${ORDEAL_CLUSTER_ID:-}" ] && [ ! -f /var/lib/kafka/data/meta.properties ]; then
  if grep -qx 'process.roles=broker' /etc/ordeal/server.properties; then
    # A broker's format writes meta.properties alone (the metadata version comes from the
    # controllers), so a broker writes it here instead of starting a JVM for it: on 2 cores,
    # seven format JVMs at once cost a KRaft boot some 10 s.
    node=$(sed -n 's/^node\.id=//p' /etc/ordeal/server.properties)
    dir=$(head -c 16 /dev/urandom | base64 | tr '+/' '-_' | tr -d '=')
    printf 'version=1\ncluster.id=%s\nnode.id=%s\ndirectory.id=%s\n' "$ORDEAL_CLUSTER_ID" "$node" "$dir" \
      > /var/lib/kafka/data/meta.properties
  else
    java -Xmx128m -XX:TieredStopAtLevel=1 -XX:+UseSerialGC $logging -cp '/opt/kafka/libs/*' \
      kafka.tools.StorageTool format -t "$ORDEAL_CLUSTER_ID" -c /etc/ordeal/server.properties --ignore-formatted
  fi
fi
# The first listener's port, as /proc/net/tcp{,6} spell it (4 hex digits, upper case).
port=$(sed -n 's/^listeners=[^,]*:\([0-9][0-9]*\).*/\1/p' /etc/ordeal/server.properties)
hexport=$(printf '%04X' "${port:-9092}")
served=/tmp/ordeal-served
listening() { grep -q "^ *[0-9]*: [0-9A-F]*:$hexport [0-9A-F]*:[0-9A-F]* 0A " /proc/net/tcp /proc/net/tcp6 2>/dev/null; }
stopping=0
pid=0
trap 'stopping=1; [ "$pid" -gt 0 ] && kill -TERM "$pid" 2>/dev/null' TERM INT
attempt=0
while :; do
  started=$(date +%s)
  rm -f "$served"
  java $ORDEAL_JAVA_OPTS $logging \
    -cp '/opt/kafka/libs/*' kafka.Kafka /etc/ordeal/server.properties &
  pid=$!
  # Notes the moment the node's listener is open; ends with the node.
  ( while kill -0 "$pid" 2>/dev/null; do
      if listening; then : > "$served"; exit 0; fi
      sleep 1
    done ) &
  watcher=$!
  set +e
  wait "$pid"; rc=$?
  while kill -0 "$pid" 2>/dev/null; do wait "$pid"; rc=$?; done
  kill "$watcher" 2>/dev/null
  wait "$watcher" 2>/dev/null
  set -e
  attempt=$((attempt + 1))
  ran=$(( $(date +%s) - started ))
  if [ "$stopping" = 1 ] || [ "$rc" = 0 ] || [ -e "$served" ] || [ "$attempt" -ge 15 ]; then
    exit "$rc"
  fi
  echo "ordeal: broker exited ($rc) ${ran}s after starting, before it served; starting it again in 2 s (attempt $attempt)"
  sleep 2
done
