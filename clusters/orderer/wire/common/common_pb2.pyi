import datetime

from google.protobuf import timestamp_pb2 as _timestamp_pb2
from google.protobuf.internal import containers as _containers
from google.protobuf.internal import enum_type_wrapper as _enum_type_wrapper
from google.protobuf import descriptor as _descriptor
from google.protobuf import message as _message
from collections.abc import Iterable as _Iterable, Mapping as _Mapping
from typing import ClassVar as _ClassVar, Optional as _Optional, Union as _Union

DESCRIPTOR: _descriptor.FileDescriptor

class Status(int, metaclass=_enum_type_wrapper.EnumTypeWrapper):
    __slots__ = ()
    UNKNOWN: _ClassVar[Status]
    SUCCESS: _ClassVar[Status]
    BAD_REQUEST: _ClassVar[Status]
    FORBIDDEN: _ClassVar[Status]
    NOT_FOUND: _ClassVar[Status]
    REQUEST_ENTITY_TOO_LARGE: _ClassVar[Status]
    INTERNAL_SERVER_ERROR: _ClassVar[Status]
    NOT_IMPLEMENTED: _ClassVar[Status]
    SERVICE_UNAVAILABLE: _ClassVar[Status]

class HeaderType(int, metaclass=_enum_type_wrapper.EnumTypeWrapper):
    __slots__ = ()
    MESSAGE: _ClassVar[HeaderType]
    CONFIG: _ClassVar[HeaderType]
    CONFIG_UPDATE: _ClassVar[HeaderType]
    ENDORSER_TRANSACTION: _ClassVar[HeaderType]
    ORDERER_TRANSACTION: _ClassVar[HeaderType]
    DELIVER_SEEK_INFO: _ClassVar[HeaderType]
    CHAINCODE_PACKAGE: _ClassVar[HeaderType]

class BlockMetadataIndex(int, metaclass=_enum_type_wrapper.EnumTypeWrapper):
    __slots__ = ()
    SIGNATURES: _ClassVar[BlockMetadataIndex]
    LAST_CONFIG: _ClassVar[BlockMetadataIndex]
    TRANSACTIONS_FILTER: _ClassVar[BlockMetadataIndex]
    ORDERER: _ClassVar[BlockMetadataIndex]
UNKNOWN: Status
SUCCESS: Status
BAD_REQUEST: Status
FORBIDDEN: Status
NOT_FOUND: Status
REQUEST_ENTITY_TOO_LARGE: Status
INTERNAL_SERVER_ERROR: Status
NOT_IMPLEMENTED: Status
SERVICE_UNAVAILABLE: Status
MESSAGE: HeaderType
CONFIG: HeaderType
CONFIG_UPDATE: HeaderType
ENDORSER_TRANSACTION: HeaderType
ORDERER_TRANSACTION: HeaderType
DELIVER_SEEK_INFO: HeaderType
CHAINCODE_PACKAGE: HeaderType
SIGNATURES: BlockMetadataIndex
LAST_CONFIG: BlockMetadataIndex
TRANSACTIONS_FILTER: BlockMetadataIndex
ORDERER: BlockMetadataIndex

class Metadata(_message.Message):
    __slots__ = ("value", "signatures")
    VALUE_FIELD_NUMBER: _ClassVar[int]
    SIGNATURES_FIELD_NUMBER: _ClassVar[int]
    value: bytes
    signatures: _containers.RepeatedCompositeFieldContainer[MetadataSignature]
    def __init__(self, value: _Optional[bytes] = ..., signatures: _Optional[_Iterable[_Union[MetadataSignature, _Mapping]]] = ...) -> None: ...

class MetadataSignature(_message.Message):
    __slots__ = ("signature_header", "signature")
    SIGNATURE_HEADER_FIELD_NUMBER: _ClassVar[int]
    SIGNATURE_FIELD_NUMBER: _ClassVar[int]
    signature_header: bytes
    signature: bytes
    def __init__(self, signature_header: _Optional[bytes] = ..., signature: _Optional[bytes] = ...) -> None: ...

class Header(_message.Message):
    __slots__ = ("channel_header", "signature_header")
    CHANNEL_HEADER_FIELD_NUMBER: _ClassVar[int]
    SIGNATURE_HEADER_FIELD_NUMBER: _ClassVar[int]
    channel_header: bytes
    signature_header: bytes
    def __init__(self, channel_header: _Optional[bytes] = ..., signature_header: _Optional[bytes] = ...) -> None: ...

class ChannelHeader(_message.Message):
    __slots__ = ("type", "version", "timestamp", "channel_id", "tx_id", "epoch", "extension", "tls_cert_hash")
    TYPE_FIELD_NUMBER: _ClassVar[int]
    VERSION_FIELD_NUMBER: _ClassVar[int]
    TIMESTAMP_FIELD_NUMBER: _ClassVar[int]
    CHANNEL_ID_FIELD_NUMBER: _ClassVar[int]
    TX_ID_FIELD_NUMBER: _ClassVar[int]
    EPOCH_FIELD_NUMBER: _ClassVar[int]
    EXTENSION_FIELD_NUMBER: _ClassVar[int]
    TLS_CERT_HASH_FIELD_NUMBER: _ClassVar[int]
    type: int
    version: int
    timestamp: _timestamp_pb2.Timestamp
    channel_id: str
    tx_id: str
    epoch: int
    extension: bytes
    tls_cert_hash: bytes
    def __init__(self, type: _Optional[int] = ..., version: _Optional[int] = ..., timestamp: _Optional[_Union[datetime.datetime, _timestamp_pb2.Timestamp, _Mapping]] = ..., channel_id: _Optional[str] = ..., tx_id: _Optional[str] = ..., epoch: _Optional[int] = ..., extension: _Optional[bytes] = ..., tls_cert_hash: _Optional[bytes] = ...) -> None: ...

class SignatureHeader(_message.Message):
    __slots__ = ("creator", "nonce")
    CREATOR_FIELD_NUMBER: _ClassVar[int]
    NONCE_FIELD_NUMBER: _ClassVar[int]
    creator: bytes
    nonce: bytes
    def __init__(self, creator: _Optional[bytes] = ..., nonce: _Optional[bytes] = ...) -> None: ...

class Payload(_message.Message):
    __slots__ = ("header", "data")
    HEADER_FIELD_NUMBER: _ClassVar[int]
    DATA_FIELD_NUMBER: _ClassVar[int]
    header: Header
    data: bytes
    def __init__(self, header: _Optional[_Union[Header, _Mapping]] = ..., data: _Optional[bytes] = ...) -> None: ...

class Envelope(_message.Message):
    __slots__ = ("payload", "signature")
    PAYLOAD_FIELD_NUMBER: _ClassVar[int]
    SIGNATURE_FIELD_NUMBER: _ClassVar[int]
    payload: bytes
    signature: bytes
    def __init__(self, payload: _Optional[bytes] = ..., signature: _Optional[bytes] = ...) -> None: ...

class Block(_message.Message):
    __slots__ = ("header", "data", "metadata")
    HEADER_FIELD_NUMBER: _ClassVar[int]
    DATA_FIELD_NUMBER: _ClassVar[int]
    METADATA_FIELD_NUMBER: _ClassVar[int]
    header: BlockHeader
    data: BlockData
    metadata: BlockMetadata
    def __init__(self, header: _Optional[_Union[BlockHeader, _Mapping]] = ..., data: _Optional[_Union[BlockData, _Mapping]] = ..., metadata: _Optional[_Union[BlockMetadata, _Mapping]] = ...) -> None: ...

class BlockHeader(_message.Message):
    __slots__ = ("number", "previous_hash", "data_hash")
    NUMBER_FIELD_NUMBER: _ClassVar[int]
    PREVIOUS_HASH_FIELD_NUMBER: _ClassVar[int]
    DATA_HASH_FIELD_NUMBER: _ClassVar[int]
    number: int
    previous_hash: bytes
    data_hash: bytes
    def __init__(self, number: _Optional[int] = ..., previous_hash: _Optional[bytes] = ..., data_hash: _Optional[bytes] = ...) -> None: ...

class BlockData(_message.Message):
    __slots__ = ("data",)
    DATA_FIELD_NUMBER: _ClassVar[int]
    data: _containers.RepeatedScalarFieldContainer[bytes]
    def __init__(self, data: _Optional[_Iterable[bytes]] = ...) -> None: ...

class BlockMetadata(_message.Message):
    __slots__ = ("metadata",)
    METADATA_FIELD_NUMBER: _ClassVar[int]
    metadata: _containers.RepeatedScalarFieldContainer[bytes]
    def __init__(self, metadata: _Optional[_Iterable[bytes]] = ...) -> None: ...
