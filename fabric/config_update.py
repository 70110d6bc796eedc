"""Channel config updates: signing a channel-creation transaction as Fabric v1.4's `peer channel
create -f` does, and building the batch-setting updates the ordering workload submits.

`configtxgen -outputCreateChannelTx` writes an Envelope whose payload has a CONFIG_UPDATE
channel header and whose data is a common.ConfigUpdateEnvelope without signatures. The peer
CLI (peer/channel/create.go) checks that shape, appends one common.ConfigSignature of its
identity (signature_header = a marshalled SignatureHeader(creator, fresh nonce); signature
over signature_header || config_update) and sends the result in a new envelope: CONFIG_UPDATE
for the same channel, version 0, epoch 0, signed by the same identity (CreateSignedEnvelope).
The orderer then checks the signatures against the consortium's channel creation policy.
"""
from __future__ import annotations

import os

from google.protobuf.message import DecodeError

from fabric.envelopes import NONCE_BYTES, signed_envelope
from fabric.identity import Identity
from osn.batch_config import BATCH_VALUES
from osn.envelopes import MalformedEnvelope
from osn.wire.common import common_pb2, configtx_pb2
from osn.wire.orderer import configuration_pb2


def _config_update_parts(tx: common_pb2.Envelope) -> tuple[str, configtx_pb2.ConfigUpdateEnvelope]:
    try:
        payload = common_pb2.Payload.FromString(tx.payload)
        if not payload.HasField("header") or not payload.header.channel_header:
            raise MalformedEnvelope("channel creation tx has no channel header")
        channel_header = common_pb2.ChannelHeader.FromString(payload.header.channel_header)
        if channel_header.type != common_pb2.CONFIG_UPDATE:
            raise MalformedEnvelope(f"channel creation tx has header type {channel_header.type}, not CONFIG_UPDATE")
        if not channel_header.channel_id:
            raise MalformedEnvelope("channel creation tx has no channel id")
        update = configtx_pb2.ConfigUpdateEnvelope.FromString(payload.data)
    except DecodeError as exc:
        raise MalformedEnvelope(f"channel creation tx: {exc}") from None
    if not update.config_update:
        raise MalformedEnvelope("channel creation tx carries no config update")
    return channel_header.channel_id, update


def read_channel_id(tx: common_pb2.Envelope) -> str:
    """The channel a CONFIG_UPDATE envelope creates or updates; raises MalformedEnvelope."""
    return _config_update_parts(tx)[0]


def config_signature(config_update: bytes, identity: Identity) -> configtx_pb2.ConfigSignature:
    """`identity`'s signature of a marshalled ConfigUpdate, as a ConfigUpdateEnvelope holds it."""
    signature_header = common_pb2.SignatureHeader(creator=identity.creator,
                                                  nonce=os.urandom(NONCE_BYTES)).SerializeToString()
    return configtx_pb2.ConfigSignature(signature_header=signature_header,
                                        signature=identity.sign(signature_header + config_update))


def sign_channel_creation(tx: common_pb2.Envelope, identity: Identity) -> common_pb2.Envelope:
    """The envelope to Broadcast to create the channel of `tx` (configtxgen's output)."""
    channel, update = _config_update_parts(tx)
    signed = configtx_pb2.ConfigUpdateEnvelope()
    signed.CopyFrom(update)
    signed.signatures.append(config_signature(update.config_update, identity))
    return signed_envelope(channel, identity, signed.SerializeToString(), common_pb2.CONFIG_UPDATE,
                           with_tx_id=False)


# -- channel config updates of the Orderer group's batch settings ----------------------------
# The two Orderer-group values the ordering workload changes, by the history's name of each.
def config_of_block(block: common_pb2.Block) -> configtx_pb2.Config:
    """The channel config a config block carries (its one CONFIG envelope); raises
    MalformedEnvelope for a block that is not one."""
    try:
        envelope = common_pb2.Envelope.FromString(block.data.data[0])
        payload = common_pb2.Payload.FromString(envelope.payload)
        header = common_pb2.ChannelHeader.FromString(payload.header.channel_header)
        if header.type != common_pb2.CONFIG:
            raise MalformedEnvelope(f"block {block.header.number} is not a config block (header type {header.type})")
        return configtx_pb2.ConfigEnvelope.FromString(payload.data).config
    except (DecodeError, IndexError) as exc:
        raise MalformedEnvelope(f"block {block.header.number}: {exc}") from None


def last_config_index(block: common_pb2.Block) -> int:
    """The number of the last config block as of `block` (Fabric 1.4's LAST_CONFIG metadata)."""
    try:
        metadata = common_pb2.Metadata.FromString(block.metadata.metadata[common_pb2.LAST_CONFIG])
        return common_pb2.LastConfig.FromString(metadata.value).index
    except (DecodeError, IndexError) as exc:
        raise MalformedEnvelope(f"block {block.header.number} has no LAST_CONFIG metadata: {exc}") from None


def batch_update(channel: str, config: configtx_pb2.Config, name: str, setting: int) -> tuple[bytes, int]:
    """A marshalled ConfigUpdate that sets the Orderer group's `name` ("max_message_count" or
    "batch_timeout_ms") to `setting` on top of `config`, and the version it writes."""
    current = config.channel_group.groups["Orderer"].values[BATCH_VALUES[name]]
    if name == "max_message_count":
        size = configuration_pb2.BatchSize.FromString(current.value)
        size.max_message_count = setting
        raw = size.SerializeToString()
    else:
        raw = configuration_pb2.BatchTimeout(timeout=f"{setting}ms").SerializeToString()
    return orderer_value_update(channel, config, BATCH_VALUES[name], raw)


def consensus_update(channel: str, config: configtx_pb2.Config, *, state: int | None = None,
                     consensus_type: str | None = None, metadata: bytes | None = None) -> tuple[bytes, int]:
    """A marshalled ConfigUpdate of the Orderer group's ConsensusType: its state
    (orderer.ConsensusType.STATE_MAINTENANCE / STATE_NORMAL), its type ("etcdraft") and
    metadata (etcdraft's ConfigMetadata), each left as `config` has it when not given. Fabric
    1.4.2+ lets the type change only in maintenance mode, and only the ConsensusType value
    change while in it (its MaintenanceFilter), the steps of the Kafka-to-Raft migration."""
    value = config.channel_group.groups["Orderer"].values["ConsensusType"]
    current = configuration_pb2.ConsensusType.FromString(value.value)
    if state is not None:
        current.state = state
    if consensus_type is not None:
        current.type = consensus_type
    if metadata is not None:
        current.metadata = metadata
    return orderer_value_update(channel, config, "ConsensusType", current.SerializeToString())


def consensus_of(config: configtx_pb2.Config) -> configuration_pb2.ConsensusType:
    return configuration_pb2.ConsensusType.FromString(
        config.channel_group.groups["Orderer"].values["ConsensusType"].value)


def orderer_value_update(channel: str, config: configtx_pb2.Config, key: str, raw: bytes) -> tuple[bytes, int]:
    """A marshalled ConfigUpdate that sets the Orderer group's value `key` to `raw` on top of
    `config`, and the version it writes. As Fabric's rules (and configtxlator) have it: the
    read set pins the channel and Orderer groups at their versions, the write set carries them
    at the same versions (so only the value is a change) and the value at its version plus
    one, under its mod_policy. A config that moved on meanwhile makes the orderer refuse it
    (BAD_REQUEST at Broadcast) or, already ordered, discard it on re-validation."""
    root, orderer = config.channel_group, config.channel_group.groups["Orderer"]
    current = orderer.values[key]
    read_set = configtx_pb2.ConfigGroup(version=root.version)
    read_set.groups["Orderer"].version = orderer.version
    write_set = configtx_pb2.ConfigGroup(version=root.version)
    write_set.groups["Orderer"].version = orderer.version
    written = write_set.groups["Orderer"].values[key]
    written.version, written.value, written.mod_policy = current.version + 1, raw, current.mod_policy
    update = configtx_pb2.ConfigUpdate(channel_id=channel, read_set=read_set, write_set=write_set)
    return update.SerializeToString(), current.version + 1


def config_update_envelope(channel: str, config_update: bytes, signers: list[Identity], submitter: Identity,
                           nonce: bytes) -> common_pb2.Envelope:
    """The CONFIG_UPDATE envelope to Broadcast: the update signed by each of `signers` (whom its
    policy needs), in an envelope `submitter` signs (who may write to the channel) carrying
    `nonce`, so that the config block that orders it can be named by it (the block's CONFIG
    envelope keeps this one as its last_update)."""
    signed = configtx_pb2.ConfigUpdateEnvelope(config_update=config_update,
                                               signatures=[config_signature(config_update, s) for s in signers])
    return signed_envelope(channel, submitter, signed.SerializeToString(), common_pb2.CONFIG_UPDATE, nonce=nonce,
                           with_tx_id=False)
