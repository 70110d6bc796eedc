"""ordeal: nemesis — faults as ops (Jepsen's jepsen.nemesis).

registry.py names every fault (FAULTS), the fault kinds of ground/fault_kinds.py plus a
few more shapes; the modules that make them:

- process_faults: kill-broker, kill-leader, kill-controller, pause-broker, kill-osn, pause-osn,
  kill-zookeeper, pause-zookeeper
- partition: partition-halves, isolate-leader, isolate-controller, zk-quorum-loss,
  partition-majorities-ring, isolate-node, zk-from-brokers (topologies.py shapes made into
  iptables rules in the nodes' namespaces; clusters/namespace.py runs them)
- link_faults: link-faults (toxiproxy toxics on client-to-broker links)
- unclean_toggle: unclean-toggle (unclean.leader.election.enable at run time, read back)
- targeted_loss: targeted-isr-shrink (Jepsen's 2013 Kafka loss, step by step)
- liveness_probe: kafka-loss-probed (OSNs cut from Kafka while a kubelet-like liveness
  probe of /healthz restarts them; on Fabric 1.4.12 the next probe crashes the orderer)
- disk_loss: disk-loss, disk-loss-sole-in-sync (SIGKILL, the node's volumes emptied as a
  swapped disk, started again; the second first pauses a partition's followers until its
  leader is the only in-sync replica)
- noop: touches nothing (runs without a cluster)
- schedule: mixed and txn-mixed (a seeded pick among faults), run_schedule (faults at an interval
  without the harness, always healed)

targets.py picks whom to hit (random, or the leader / ISR / controller read live). Every
fault answers the op to record and has heal_all(), which undoes all it can have done.
"""
