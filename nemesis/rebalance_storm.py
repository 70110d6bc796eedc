"""rebalance-storm: members that join a consumer group in use and leave it again quickly, so
that its real members (the workload's subscribed consumers) rebalance again and again while
they poll and commit. The storm's members never commit: what the real members are handed
back is still the group's last commit, which is what the checkers hold their positions to
(checkers.consumer_groups).

The group is one with members now, picked by the seed (nemesis.targets.live_group); its
topics are those its members are assigned. The storm runs on a thread of its own from start
to stop, a bounded number of joins per second, and every member it made is closed by stop or
heal_all. Storm members speak the group's protocol (classic, or KIP-848's consumer).
"""
from __future__ import annotations

import random
import threading
import time
from typing import Any

from confluent_kafka import Consumer
from pydantic import BaseModel, ConfigDict, Field

from clusters.health import QUIET, admin_client
from ground.nemesis_protocol import NoTarget
from ground.op import Op
from nemesis.fault import Fault, op
from nemesis.targets import live_group

NAME = "rebalance-storm"


class StormOptions(BaseModel):
    model_config = ConfigDict(extra="forbid", frozen=True)

    members: int = Field(2, ge=1, le=20, description="storm members in the group at once")
    stay: float = Field(2.0, gt=0, le=60, description="seconds each wave of storm members stays")
    seed: int = 0


class RebalanceStorm(Fault):
    """start: waves of `members` consumers join the group and leave after `stay` seconds, until
    stop; stop / heal_all: the storm ends and its last members leave."""

    name = NAME

    def __init__(self, options: StormOptions):
        super().__init__(options.seed)
        self.options = options
        self._halt = threading.Event()
        self._thread: threading.Thread | None = None
        self._group: str | None = None
        self._joins = 0

    def start(self, rng: random.Random) -> Op:
        if self._thread is not None:
            self.stop()
        admin = admin_client(self.cluster.bootstrap_servers())
        listing = live_group(admin, rng)
        if listing is None:
            raise NoTarget("no consumer group has members (nothing subscribed)")
        group = listing.group_id
        described = admin.describe_consumer_groups([group], request_timeout=10)[group].result(timeout=15)
        topics = sorted({tp.topic for m in described.members for tp in (m.assignment.topic_partitions or [])})
        if not topics:
            raise NoTarget(f"group {group} has no partitions assigned yet")
        protocol = "consumer" if getattr(listing.type, "name", "") == "CONSUMER" else "classic"
        self._group, self._joins = group, 0
        self._halt.clear()
        self._thread = threading.Thread(target=self._storm, args=(group, topics, protocol), daemon=True,
                                        name="ordeal-rebalance-storm")
        self._thread.start()
        return op("storm", self.name, group=group, topics=topics, protocol=protocol, members=self.options.members)

    def _storm(self, group: str, topics: list[str], protocol: str) -> None:
        config: dict[str, Any] = {"bootstrap.servers": self.cluster.bootstrap_servers(), "group.id": group,
                                  "enable.auto.commit": False, "auto.offset.reset": "earliest",
                                  "group.protocol": protocol}
        if protocol == "classic":
            config["session.timeout.ms"] = 6_000
        while not self._halt.is_set():
            members = []
            try:
                for _ in range(self.options.members):
                    member = Consumer(config, logger=QUIET)
                    member.subscribe(topics)
                    members.append(member)
                    self._joins += 1
                until = time.monotonic() + self.options.stay
                while time.monotonic() < until and not self._halt.is_set():
                    for member in members:
                        member.consume(num_messages=100, timeout=0.05)  # joins, and keeps its membership
            except Exception:  # noqa: BLE001 - a broker down: this wave ends, the next one tries again
                self._halt.wait(0.5)
            finally:
                for member in members:
                    try:
                        member.close()  # leaves the group: the next rebalance
                    except Exception:  # noqa: BLE001 - closing what a fault broke
                        pass

    def stop(self) -> Op:
        thread, self._thread = self._thread, None
        self._halt.set()
        if thread is not None:
            thread.join(timeout=60)
        return op("calm", self.name, group=self._group, joins=self._joins)

    def heal_all(self) -> list[Op]:
        return [self.stop()] if self._thread is not None else []
