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
# A broker started again right after a SIGKILL finds its old registration in ZooKeeper
# (/brokers/ids/N) alive until that session expires (zookeeper.session.timeout.ms) and
# exits at once with NodeExistsException. A supervisor such as systemd would start it
# again; so does this script: only for exits within a minute of starting, at most 15 times.
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
stopping=0
pid=0
trap 'stopping=1; [ "$pid" -gt 0 ] && kill -TERM "$pid" 2>/dev/null' TERM INT
attempt=0
while :; do
  started=$(date +%s)
  java $ORDEAL_JAVA_OPTS $logging \
    -cp '/opt/kafka/libs/*' kafka.Kafka /etc/ordeal/server.properties &
  pid=$!
  set +e
  wait "$pid"; rc=$?
  while kill -0 "$pid" 2>/dev/null; do wait "$pid"; rc=$?; done
  set -e
  attempt=$((attempt + 1))
  ran=$(( $(date +%s) - started ))
  if [ "$stopping" = 1 ] || [ "$rc" = 0 ] || [ "$ran" -gt 60 ] || [ "$attempt" -ge 15 ]; then
    exit "$rc"
  fi
  echo "ordeal: broker exited ($rc) ${ran}s after starting; starting it again in 2 s (attempt $attempt)"
  sleep 2
done
