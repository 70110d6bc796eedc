#!/bin/sh
# ORDEAL_CONFIG is zoo.cfg; ORDEAL_MYID is this server's id in the ensemble.
set -e
mkdir -p /etc/ordeal /var/lib/zookeeper
printf '%s\n' "$ORDEAL_CONFIG" > /etc/ordeal/zoo.cfg
printf '%s\n' "$ORDEAL_MYID" > /var/lib/zookeeper/myid
exec java $ORDEAL_JAVA_OPTS -Dlog4j.configuration=file:/opt/ordeal/log4j.properties \
  -Dzookeeper.admin.enableServer=false \
  -cp '/opt/kafka/libs/*' org.apache.zookeeper.server.quorum.QuorumPeerMain /etc/ordeal/zoo.cfg
