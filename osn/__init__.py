"""Ordering service node (OSN): this project's Python implementation of Fabric v1.x's Kafka consenter.

The same package runs on the host (tests, client) and in the OSN container, where it is
copied to /opt/ordeal/clusters/orderer; the runtime imports only the standard library,
grpcio, protobuf, confluent-kafka and pydantic (requirements.in; versions from requirements.lock).
"""
