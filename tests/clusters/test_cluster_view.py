"""The real cluster and node, and the tests' fakes, implement ground/cluster_view.py's contract:
a member the parts above ask for and one of them lacks fails here, not in a run."""
from __future__ import annotations

import pytest

from clusters.cluster import Cluster
from clusters.node import Node
from ground.cluster_view import ClusterView, NodeView
from tests.support import FakeCluster, FakeNode

def members(protocol: type) -> set[str]:
    return {name for name in vars(protocol) if not name.startswith("_")} | set(protocol.__annotations__)


@pytest.mark.parametrize(("implementation", "protocol"), [(Cluster, ClusterView), (Node, NodeView)])
def test_the_real_cluster_and_node_have_every_member_of_their_protocol(implementation, protocol):
    # What the real ones set per instance: a dataclass's fields, and what Cluster.__init__ sets.
    per_instance = set(getattr(implementation, "__dataclass_fields__", {})) | {"run", "variant", "nodes"}
    assert sorted(m for m in members(protocol) if not hasattr(implementation, m) and m not in per_instance) == []


@pytest.mark.parametrize(("fake", "protocol"), [(FakeCluster(osns=1), ClusterView), (FakeNode("kafka1"), NodeView)])
def test_the_tests_fakes_have_every_member_of_the_protocol(fake, protocol):
    assert sorted(m for m in members(protocol) if not hasattr(fake, m)) == []


def test_a_fake_cluster_and_its_nodes_pass_as_the_protocols_at_run_time():
    cluster = FakeCluster(osns=3)
    assert isinstance(cluster, ClusterView) and all(isinstance(n, NodeView) for n in cluster.nodes)
