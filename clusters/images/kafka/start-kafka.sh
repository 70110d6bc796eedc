#!/bin/sh
# The cluster passes server.properties in ORDEAL_CONFIG; writing it at every start keeps
# a restarted container on the same settings.
#
# A broker started again right after a SIGKILL finds its old registration in ZooKeeper
# (/brokers/ids/N) alive until that session expires (zookeeper.session.timeout.ms) and
# exits at once with NodeExistsException. A supervisor such as systemd would start it
# again; so does this script: only for exits within a minute of starting, at most 15 times.
set -e
mkdir -p /etc/ordeal /var/lib/kafka/data
printf '%s\n' "$ORDEAL_CONFIG" > /etc/ordeal/server.properties
stopping=0
pid=0
trap 'stopping=1; [ "$pid" -gt 0 ] && kill -TERM "$pid" 2>/dev/null' TERM INT
attempt=0
while :; do
  started=$(date +%s)
  java $ORDEAL_JAVA_OPTS -Dlog4j.configuration=file:/opt/ordeal/log4j.properties \
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
