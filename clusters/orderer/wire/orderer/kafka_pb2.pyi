from google.protobuf.internal import enum_type_wrapper as _enum_type_wrapper
from google.protobuf import descriptor as _descriptor
from google.protobuf import message as _message
from collections.abc import Mapping as _Mapping
from typing import ClassVar as _ClassVar, Optional as _Optional, Union as _Union

DESCRIPTOR: _descriptor.FileDescriptor

class KafkaMessage(_message.Message):
    __slots__ = ("regular", "time_to_cut", "connect")
    REGULAR_FIELD_NUMBER: _ClassVar[int]
    TIME_TO_CUT_FIELD_NUMBER: _ClassVar[int]
    CONNECT_FIELD_NUMBER: _ClassVar[int]
    regular: KafkaMessageRegular
    time_to_cut: KafkaMessageTimeToCut
    connect: KafkaMessageConnect
    def __init__(self, regular: _Optional[_Union[KafkaMessageRegular, _Mapping]] = ..., time_to_cut: _Optional[_Union[KafkaMessageTimeToCut, _Mapping]] = ..., connect: _Optional[_Union[KafkaMessageConnect, _Mapping]] = ...) -> None: ...

class KafkaMessageRegular(_message.Message):
    __slots__ = ("payload", "config_seq", "original_offset")
    class Class(int, metaclass=_enum_type_wrapper.EnumTypeWrapper):
        __slots__ = ()
        UNKNOWN: _ClassVar[KafkaMessageRegular.Class]
        NORMAL: _ClassVar[KafkaMessageRegular.Class]
        CONFIG: _ClassVar[KafkaMessageRegular.Class]
    UNKNOWN: KafkaMessageRegular.Class
    NORMAL: KafkaMessageRegular.Class
    CONFIG: KafkaMessageRegular.Class
    PAYLOAD_FIELD_NUMBER: _ClassVar[int]
    CONFIG_SEQ_FIELD_NUMBER: _ClassVar[int]
    CLASS_FIELD_NUMBER: _ClassVar[int]
    ORIGINAL_OFFSET_FIELD_NUMBER: _ClassVar[int]
    payload: bytes
    config_seq: int
    original_offset: int
    def __init__(self, payload: _Optional[bytes] = ..., config_seq: _Optional[int] = ..., original_offset: _Optional[int] = ..., **kwargs) -> None: ...

class KafkaMessageTimeToCut(_message.Message):
    __slots__ = ("block_number",)
    BLOCK_NUMBER_FIELD_NUMBER: _ClassVar[int]
    block_number: int
    def __init__(self, block_number: _Optional[int] = ...) -> None: ...

class KafkaMessageConnect(_message.Message):
    __slots__ = ("payload",)
    PAYLOAD_FIELD_NUMBER: _ClassVar[int]
    payload: bytes
    def __init__(self, payload: _Optional[bytes] = ...) -> None: ...

class KafkaMetadata(_message.Message):
    __slots__ = ("last_offset_persisted", "last_original_offset_processed", "last_resubmitted_config_offset")
    LAST_OFFSET_PERSISTED_FIELD_NUMBER: _ClassVar[int]
    LAST_ORIGINAL_OFFSET_PROCESSED_FIELD_NUMBER: _ClassVar[int]
    LAST_RESUBMITTED_CONFIG_OFFSET_FIELD_NUMBER: _ClassVar[int]
    last_offset_persisted: int
    last_original_offset_processed: int
    last_resubmitted_config_offset: int
    def __init__(self, last_offset_persisted: _Optional[int] = ..., last_original_offset_processed: _Optional[int] = ..., last_resubmitted_config_offset: _Optional[int] = ...) -> None: ...
