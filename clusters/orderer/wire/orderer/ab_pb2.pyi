from clusters.orderer.wire.common import common_pb2 as _common_pb2
from google.protobuf.internal import enum_type_wrapper as _enum_type_wrapper
from google.protobuf import descriptor as _descriptor
from google.protobuf import message as _message
from collections.abc import Mapping as _Mapping
from typing import ClassVar as _ClassVar, Optional as _Optional, Union as _Union

DESCRIPTOR: _descriptor.FileDescriptor

class BroadcastResponse(_message.Message):
    __slots__ = ("status", "info")
    STATUS_FIELD_NUMBER: _ClassVar[int]
    INFO_FIELD_NUMBER: _ClassVar[int]
    status: _common_pb2.Status
    info: str
    def __init__(self, status: _Optional[_Union[_common_pb2.Status, str]] = ..., info: _Optional[str] = ...) -> None: ...

class SeekNewest(_message.Message):
    __slots__ = ()
    def __init__(self) -> None: ...

class SeekOldest(_message.Message):
    __slots__ = ()
    def __init__(self) -> None: ...

class SeekSpecified(_message.Message):
    __slots__ = ("number",)
    NUMBER_FIELD_NUMBER: _ClassVar[int]
    number: int
    def __init__(self, number: _Optional[int] = ...) -> None: ...

class SeekNextCommit(_message.Message):
    __slots__ = ()
    def __init__(self) -> None: ...

class SeekPosition(_message.Message):
    __slots__ = ("newest", "oldest", "specified", "next_commit")
    NEWEST_FIELD_NUMBER: _ClassVar[int]
    OLDEST_FIELD_NUMBER: _ClassVar[int]
    SPECIFIED_FIELD_NUMBER: _ClassVar[int]
    NEXT_COMMIT_FIELD_NUMBER: _ClassVar[int]
    newest: SeekNewest
    oldest: SeekOldest
    specified: SeekSpecified
    next_commit: SeekNextCommit
    def __init__(self, newest: _Optional[_Union[SeekNewest, _Mapping]] = ..., oldest: _Optional[_Union[SeekOldest, _Mapping]] = ..., specified: _Optional[_Union[SeekSpecified, _Mapping]] = ..., next_commit: _Optional[_Union[SeekNextCommit, _Mapping]] = ...) -> None: ...

class SeekInfo(_message.Message):
    __slots__ = ("start", "stop", "behavior", "error_response")
    class SeekBehavior(int, metaclass=_enum_type_wrapper.EnumTypeWrapper):
        __slots__ = ()
        BLOCK_UNTIL_READY: _ClassVar[SeekInfo.SeekBehavior]
        FAIL_IF_NOT_READY: _ClassVar[SeekInfo.SeekBehavior]
    BLOCK_UNTIL_READY: SeekInfo.SeekBehavior
    FAIL_IF_NOT_READY: SeekInfo.SeekBehavior
    class SeekErrorResponse(int, metaclass=_enum_type_wrapper.EnumTypeWrapper):
        __slots__ = ()
        STRICT: _ClassVar[SeekInfo.SeekErrorResponse]
        BEST_EFFORT: _ClassVar[SeekInfo.SeekErrorResponse]
    STRICT: SeekInfo.SeekErrorResponse
    BEST_EFFORT: SeekInfo.SeekErrorResponse
    START_FIELD_NUMBER: _ClassVar[int]
    STOP_FIELD_NUMBER: _ClassVar[int]
    BEHAVIOR_FIELD_NUMBER: _ClassVar[int]
    ERROR_RESPONSE_FIELD_NUMBER: _ClassVar[int]
    start: SeekPosition
    stop: SeekPosition
    behavior: SeekInfo.SeekBehavior
    error_response: SeekInfo.SeekErrorResponse
    def __init__(self, start: _Optional[_Union[SeekPosition, _Mapping]] = ..., stop: _Optional[_Union[SeekPosition, _Mapping]] = ..., behavior: _Optional[_Union[SeekInfo.SeekBehavior, str]] = ..., error_response: _Optional[_Union[SeekInfo.SeekErrorResponse, str]] = ...) -> None: ...

class DeliverResponse(_message.Message):
    __slots__ = ("status", "block")
    STATUS_FIELD_NUMBER: _ClassVar[int]
    BLOCK_FIELD_NUMBER: _ClassVar[int]
    status: _common_pb2.Status
    block: _common_pb2.Block
    def __init__(self, status: _Optional[_Union[_common_pb2.Status, str]] = ..., block: _Optional[_Union[_common_pb2.Block, _Mapping]] = ...) -> None: ...
