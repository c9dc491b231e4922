"""Encoding queries of a QueryBatchRequest once, when they are queued. Internal.

A QueryBatchRequest on the wire is its scalar fields followed by one length-delimited `queries`
entry per query; protobuf parsers accept fields in any order and append repeated entries, so a
batch is its header's serialization followed by the queued entries. Encoding each query when it
is queued (one SerializeToString of the typed request) saves building a QueryRequest and a
QueryBatchRequest of Python message objects per query, most of a batch's client-side cost.
"""

from __future__ import annotations

from typing import Union

from google.protobuf.message import Message

from voxcol.v1 import query_service_pb2 as query_pb

_QUERIES = query_pb.QueryBatchRequest.DESCRIPTOR.fields_by_name["queries"].number
_QUERY_FIELDS = {f.name: f.number for f in query_pb.QueryRequest.DESCRIPTOR.oneofs_by_name[
    "query"].fields}


def _tag(number: int) -> bytes:
    return varint(number << 3 | 2)  # wire type 2: length-delimited


def varint(value: int) -> bytes:
    out = bytearray()
    while value > 0x7F:
        out.append(value & 0x7F | 0x80)
        value >>= 7
    out.append(value)
    return bytes(out)


_QUERIES_TAG = _tag(_QUERIES)
_FIELD_TAGS = {name: _tag(number) for name, number in _QUERY_FIELDS.items()}
_SHORT = [varint(n) for n in range(1 << 14)]  # the 1- and 2-byte varints: most lengths


def _length(n: int) -> bytes:
    return _SHORT[n] if n < 16384 else varint(n)


def encode_query(field: str, request: Message) -> bytes:
    """The QueryBatchRequest.queries entry of QueryRequest{<field>: request} (client_id 0)."""
    inner = request.SerializeToString()
    tag = _FIELD_TAGS[field]
    prefix = _length(len(inner))
    return b"".join((_QUERIES_TAG, _length(len(tag) + len(prefix) + len(inner)), tag, prefix,
                     inner))


def encode_query_request(request: query_pb.QueryRequest) -> bytes:
    """The QueryBatchRequest.queries entry of a whole QueryRequest."""
    body = request.SerializeToString()
    return _QUERIES_TAG + _length(len(body)) + body


def serialize(request: Union[bytes, Message]) -> bytes:
    """The Query stream's request serializer: encoded batches pass as they are."""
    if isinstance(request, bytes):
        return request
    return request.SerializeToString()
