#!/bin/sh
# The cluster passes server.properties in ORDEAL_CONFIG; writing it at every start keeps
# a restarted container on the same settings.
set -e
mkdir -p /etc/ordeal /var/lib/kafka/data
printf '%s\n' "$ORDEAL_CONFIG" > /etc/ordeal/server.properties
exec java $ORDEAL_JAVA_OPTS -Dlog4j.configuration=file:/opt/ordeal/log4j.properties \
  -cp '/opt/kafka/libs/*' kafka.Kafka /etc/ordeal/server.properties
