"""Typed batching over the QueryService.Query stream, the hot path for game servers: queue queries
during a tick, flush() once per tick, read each answer from its future. The Python counterpart of
the C++ SDK's QueryBatcher (client/query_batcher.h).

    batcher = client.batcher()
    hits = [batcher.raycast((x, 40, z), (0, -1, 0), 90) for x, z in columns]
    batcher.flush()
    for hit in hits:
        print(hit.result().first.position)   # a RaycastResponse, or raises VoxcolError
"""

from __future__ import annotations

import concurrent.futures
import threading
import time
from typing import (TYPE_CHECKING, Any, Callable, Dict, Generic, List, Optional, Set, Tuple,
                    TypeVar)

import grpc

from voxcol import messages as m
from voxcol._stream import METHOD, QueryConnection
from voxcol._wire import encode_query, encode_query_request
from voxcol.errors import (BatchError, CancelledError, ClientClosedError, UnavailableError,
                           VoxcolError, error_from_code, status_code)
from voxcol.v1 import edit_service_pb2 as edit_pb
from voxcol.v1 import query_service_pb2 as query_pb

if TYPE_CHECKING:
    from voxcol.client import Client

Future = concurrent.futures.Future
T = TypeVar("T")


class _Chunk:
    """Queued queries that are sent together (at most max_batch_queries; a tick sends several
    chunks as one batch): their encoded entries and, once answered, the batch's response."""

    __slots__ = ("encoded", "fields", "own_read_at", "done", "response", "offset", "error",
                 "_callbacks", "_lock")

    def __init__(self) -> None:
        self.encoded: List[bytes] = []
        self.fields: List[str] = []  # the QueryResult field of each query's answer
        self.own_read_at: Set[int] = set()  # queries reading a version of their own
        self.done = threading.Event()
        self.response: Optional[query_pb.QueryBatchResponse] = None
        self.offset = 0  # of this chunk's first query in its batch
        self.error: Optional[VoxcolError] = None
        self._callbacks: List[Callable[[], None]] = []
        self._lock = threading.Lock()

    def complete(self, response: Optional[query_pb.QueryBatchResponse],
                 error: Optional[VoxcolError]) -> None:
        with self._lock:
            if self.done.is_set():
                return
            self.response, self.error = response, error
            self.done.set()
            callbacks, self._callbacks = self._callbacks, []
        for callback in callbacks:
            callback()

    def on_done(self, callback: Callable[[], None]) -> None:
        with self._lock:
            if not self.done.is_set():
                self._callbacks.append(callback)
                return
        callback()

    def answer(self, index: int) -> Any:
        if self.error is not None:
            raise self.error
        assert self.response is not None
        position = self.offset + index
        results = self.response.results
        if position >= len(results):
            raise error_from_code(grpc.StatusCode.INTERNAL,
                                  "batch response without a result per query", METHOD)
        result = results[position]
        if result.code != 0:
            raise error_from_code(status_code(result.code), result.message, METHOD)
        answer = getattr(result, self.fields[index])
        if answer.version == 0 and index not in self.own_read_at:
            answer.version = self.response.version  # the batch's, which every query saw
        return answer


class QueryFuture(Generic[T]):
    """The answer to one queued query: the concurrent.futures.Future interface for reading it
    (result(), exception(), done(), add_done_callback()); it cannot be cancelled. result()
    returns the typed response (RaycastResponse, ...) or raises VoxcolError."""

    __slots__ = ("_chunk", "_index")

    def __init__(self, chunk: _Chunk, index: int) -> None:
        self._chunk = chunk
        self._index = index

    def done(self) -> bool:
        return self._chunk.done.is_set()

    def running(self) -> bool:
        return not self.done()

    def cancelled(self) -> bool:
        return False

    def cancel(self) -> bool:
        return False

    def result(self, timeout: Optional[float] = None) -> T:
        """The typed response; waits at most `timeout` seconds (concurrent.futures.TimeoutError
        when it has not arrived); raises VoxcolError when the query failed."""
        chunk = self._chunk
        if not chunk.done.is_set() and not chunk.done.wait(timeout):
            raise concurrent.futures.TimeoutError()
        return chunk.answer(self._index)  # type: ignore[no-any-return]

    def exception(self, timeout: Optional[float] = None) -> Optional[VoxcolError]:
        try:
            self.result(timeout)
        except VoxcolError as e:
            return e
        return None

    def add_done_callback(self, fn: Callable[["QueryFuture[T]"], object]) -> None:
        """Calls fn(self) once answered (at once if it is), on the thread that completes it."""
        self._chunk.on_done(lambda: fn(self))


class _Batch:
    """A sent batch: its chunks of queued queries, its own future (ticks, packed rays, send())."""

    __slots__ = ("chunks", "queries", "future", "world", "connection")

    def __init__(self, chunks: List[_Chunk], future: "Optional[Future[Any]]") -> None:
        self.chunks = chunks
        self.queries = sum(len(c.encoded) for c in chunks)
        self.future = future
        self.world = ""
        self.connection: Optional[QueryConnection] = None  # the stream it was sent on

    def fail(self, error: VoxcolError) -> None:
        for chunk in self.chunks:
            chunk.complete(None, error)
        if self.future is not None:
            self.future.set_exception(error)


class QueryBatcher:
    """Coalesces queries into QueryBatchRequests on one Query stream. add() and the typed adders
    (raycast(), sweep(), ...) queue a query and return a QueryFuture of its typed response
    (RaycastResponse, ...; its `version` is the batch's), which raises VoxcolError when the
    query failed: its own code
    (INVALID_ARGUMENT naming the field), its batch's (RESOURCE_EXHAUSTED when shed,
    DEADLINE_EXCEEDED, ...) or the stream's (UNAVAILABLE when it broke before the answer).
    flush() sends what is queued, once per game tick; a reader thread completes the futures as
    batch responses arrive (batches may be answered out of order).

    Every batch waits for the client's read-your-writes floor of its world (min_version), and
    the edit acks of ticks raise it. After the stream breaks, the next flush opens a new one, but
    not before `reconnect_backoff` seconds (doubled after every failed attempt up to
    `max_reconnect_backoff`); until then flushed queries fail at once with UNAVAILABLE instead of
    blocking the tick. Thread-safe: any thread may add and flush. Every future is completed
    exactly once.

    Options: `world` (default: the client's), `batch_timeout` seconds per batch from its arrival
    (QueryBatchRequest.timeout_ms; None: only the server's limits), `max_batch_queries` (the
    largest batch flush() sends; at most the server's --max_batch_queries).
    """

    def __init__(self, client: "Client", *, world: Optional[str] = None,
                 batch_timeout: Optional[float] = None, max_batch_queries: int = 256,
                 reconnect_backoff: float = 0.1, max_reconnect_backoff: float = 5.0) -> None:
        if world is not None and not isinstance(world, str):
            raise TypeError(f"world: expected a str, got {type(world).__name__}")
        self._client = client
        self._world = world
        self._timeout_ms = 0
        if batch_timeout is not None:
            self._timeout_ms = max(1, round(m.number(batch_timeout, "batch_timeout") * 1000))
        self._max_batch = max(1, m.integer(max_batch_queries, "max_batch_queries"))
        self._initial_backoff = m.number(reconnect_backoff, "reconnect_backoff")
        self._max_backoff = m.number(max_reconnect_backoff, "max_reconnect_backoff")

        self._lock = threading.Lock()  # guards everything below but the connection
        self._open: List[_Chunk] = []  # queued queries, the last chunk still filling
        self._pending: Dict[int, _Batch] = {}
        self._in_flight = 0
        self._next_batch_id = 1
        self._next_attempt = 0.0
        self._backoff = self._initial_backoff

        self._write_lock = threading.Lock()  # serializes writes, (re)connects and half-closes
        self._connection: Optional[QueryConnection] = None

    @property
    def world(self) -> str:
        return self._client.world if self._world is None else self._world

    # ---- queueing ------------------------------------------------------------------------------

    def _queue(self, encoded: bytes, field: str, own_read_at: bool) -> "QueryFuture[Any]":
        with self._lock:
            chunk = self._open[-1] if self._open else None
            if chunk is None or len(chunk.encoded) >= self._max_batch:
                chunk = _Chunk()
                self._open.append(chunk)
            if own_read_at:
                chunk.own_read_at.add(len(chunk.encoded))
            chunk.encoded.append(encoded)
            chunk.fields.append(field)
            return QueryFuture(chunk, len(chunk.encoded) - 1)

    def add(self, query: m.Query) -> "QueryFuture[Any]":
        """Queues one query (a QueryRequest or a typed request) as it is now; its future gives
        the typed response of its kind."""
        request = m.query(query)
        field = request.WhichOneof("query")
        if field is None:
            raise ValueError("add: the QueryRequest holds no query")
        return self._queue(encode_query_request(request), field,
                           getattr(request, field).HasField("read_at"))

    def _typed(self, request_type: type, field: str, build: Any, first: Any, args: tuple,
               options: dict) -> "QueryFuture[Any]":
        from voxcol.client import _message
        request = _message(request_type, first, build, args, options, field)
        return self._queue(encode_query(field, request), field, request.HasField("read_at"))

    def raycast(self, origin: Any, *args: Any,
                **options: Any) -> "QueryFuture[query_pb.RaycastResponse]":
        """A RaycastRequest, or raycast_request()'s arguments."""
        if type(origin) is query_pb.RaycastRequest and not args and not options:
            return self._queue(encode_query("raycast", origin), "raycast",  # the hot path
                               origin.HasField("read_at"))
        return self._typed(query_pb.RaycastRequest, "raycast", m.raycast_request, origin, args,
                           options)

    def sweep(self, shape: Any, *args: Any,
              **options: Any) -> "QueryFuture[query_pb.SweepResponse]":
        """A SweepRequest, or sweep_request()'s arguments."""
        return self._typed(query_pb.SweepRequest, "sweep", m.sweep_request, shape, args, options)

    def overlap(self, shape: Any, *args: Any,
                **options: Any) -> "QueryFuture[query_pb.OverlapResponse]":
        """An OverlapRequest, or overlap_request()'s arguments."""
        return self._typed(query_pb.OverlapRequest, "overlap", m.overlap_request, shape, args,
                           options)

    def contacts(self, shape: Any, *args: Any,
                 **options: Any) -> "QueryFuture[query_pb.ContactsResponse]":
        """A ContactsRequest, or contacts_request()'s arguments."""
        return self._typed(query_pb.ContactsRequest, "contacts", m.contacts_request, shape, args,
                           options)

    def probe(self, center: Any, *args: Any,
              **options: Any) -> "QueryFuture[query_pb.ProbeResponse]":
        """A ProbeRequest, or probe_request()'s arguments."""
        return self._typed(query_pb.ProbeRequest, "probe", m.probe_request, center, args,
                           options)

    def move_characters(self, moves: Any,
                        **options: Any) -> "QueryFuture[query_pb.MoveCharactersResponse]":
        """A MoveCharactersRequest, or CharacterMoves (character_move())."""
        return self._typed(query_pb.MoveCharactersRequest, "move_characters",
                           m.move_characters_request, moves, (), options)

    def find_path(self, start: Any, *args: Any,
                  **options: Any) -> "QueryFuture[query_pb.FindPathResponse]":
        """A FindPathRequest, or find_path_request()'s arguments."""
        return self._typed(query_pb.FindPathRequest, "find_path", m.find_path_request, start,
                           args, options)

    # ---- sending -------------------------------------------------------------------------------

    def _take_queued(self) -> List[_Chunk]:
        with self._lock:
            chunks, self._open = self._open, []
        return chunks

    def flush(self, min_version: int = 0, *, read_at: Optional[query_pb.ReadAt] = None) -> int:
        """Sends every queued query, in batches of at most max_batch_queries, each waiting for
        max(min_version, the world's read floor), reading `read_at` when given. Returns how many
        queries were sent; those that could not be sent are already failed (UNAVAILABLE while
        reconnecting after a break, CANCELLED when the client is closed)."""
        min_version = m.integer(min_version, "min_version")
        sent = 0
        for chunk in self._take_queued():
            header = query_pb.QueryBatchRequest(min_version=min_version)
            if read_at is not None:
                header.read_at.CopyFrom(read_at)
            if self._send(header, _Batch([chunk], None)):
                sent += len(chunk.encoded)
        return sent

    def flush_tick(self, edits: edit_pb.ApplyEditsRequest,
                   min_version: int = 0) -> "Future[query_pb.QueryBatchResponse]":
        """A game-server tick: `edits` and every queued query as one batch (not split). The
        server applies the edits first, durably, and the queries see exactly the version they
        produced. The future gives the QueryBatchResponse (edit_ack, version), or raises
        BatchError (its `response` has edit_ack set when the edits applied) or VoxcolError."""
        if not isinstance(edits, edit_pb.ApplyEditsRequest):
            raise TypeError(f"flush_tick: expected an ApplyEditsRequest (edits_request()), got "
                            f"{type(edits).__name__}")
        header = query_pb.QueryBatchRequest(min_version=m.integer(min_version, "min_version"))
        header.edits.CopyFrom(edits)
        future: "Future[query_pb.QueryBatchResponse]" = Future()
        self._send(header, _Batch(self._take_queued(), future))
        return future

    def raycasts(self, rays: query_pb.RaycastArrays, min_version: int = 0, *,
                 read_at: Optional[query_pb.ReadAt] = None
                 ) -> "Future[query_pb.QueryBatchResponse]":
        """Sends `rays` (raycast_arrays()) now as one batch of packed raycasts (queued queries
        stay queued). The response's `raycasts` has one entry per ray; a bad ray fails alone
        (its `codes` entry), malformed arrays fail the batch (BatchError INVALID_ARGUMENT)."""
        if not isinstance(rays, query_pb.RaycastArrays):
            raise TypeError(f"raycasts: expected a RaycastArrays (raycast_arrays()), got "
                            f"{type(rays).__name__}")
        header = query_pb.QueryBatchRequest(min_version=m.integer(min_version, "min_version"))
        header.raycasts.CopyFrom(rays)
        if read_at is not None:
            header.read_at.CopyFrom(read_at)
        future: "Future[query_pb.QueryBatchResponse]" = Future()
        self._send(header, _Batch([], future))
        return future

    def send(self, request: query_pb.QueryBatchRequest) -> "Future[query_pb.QueryBatchResponse]":
        """Sends a whole QueryBatchRequest as it is (queries, edits, read_at, world, raycasts,
        timeout_ms), but for the batcher's own batch id and min_version raised to the read floor
        (queued queries stay queued). The future gives the response, or raises BatchError for a
        non-OK batch code (with the response) or VoxcolError when the stream broke."""
        if not isinstance(request, query_pb.QueryBatchRequest):
            raise TypeError(f"send: expected a QueryBatchRequest, got {type(request).__name__}")
        header = query_pb.QueryBatchRequest()
        header.CopyFrom(request)
        future: "Future[query_pb.QueryBatchResponse]" = Future()
        self._send(header, _Batch([], future))
        return future

    def _send(self, header: query_pb.QueryBatchRequest, batch: _Batch) -> bool:
        """Sends `header` followed by the batch's queued queries; False (the batch failed) when
        no stream can take it."""
        target = self._client.target
        try:
            header = self._client._with_world(header, self._world)
        except (TypeError, ValueError) as e:
            batch.fail(error_from_code(grpc.StatusCode.INVALID_ARGUMENT, str(e), METHOD, target))
            return False
        batch.world = header.world
        floor = self._client.read_floor(header.world)
        if floor > header.min_version:
            header.min_version = floor
        if self._timeout_ms and not header.timeout_ms:
            header.timeout_ms = self._timeout_ms
        offset = 0
        for chunk in batch.chunks:
            chunk.offset = offset
            offset += len(chunk.encoded)
        with self._write_lock:
            connection, error = self._connect()
            if connection is None:
                assert error is not None
                batch.fail(error)
                return False
            batch.connection = connection
            with self._lock:
                header.batch_id = self._next_batch_id
                self._next_batch_id += 1
                self._in_flight += batch.queries
                self._pending[header.batch_id] = batch
            encoded = header.SerializeToString()
            if batch.chunks:
                encoded += b"".join(e for chunk in batch.chunks for e in chunk.encoded)
            # If the stream broke meanwhile, its reader fails this batch with the others.
            connection.write(encoded)
        return True

    def _connect(self) -> Tuple[Optional[QueryConnection], Optional[VoxcolError]]:
        """An open stream (write lock held), or None and why: the client is closed, or the
        stream broke and the backoff holds."""
        if self._client.closed:
            return None, ClientClosedError()
        connection = self._connection
        if connection is not None and not connection.finished:
            return connection, None
        now = time.monotonic()
        with self._lock:
            if connection is not None and now < self._next_attempt:
                return None, UnavailableError(
                    grpc.StatusCode.UNAVAILABLE,
                    "query stream: reconnecting after the stream broke (backoff)", METHOD,
                    self._client.target)
            self._next_attempt = now + self._backoff
            self._backoff = min(self._backoff * 2, self._max_backoff)
        try:
            connection = QueryConnection(
                self._client._query_method(), self._client._metadata, self._client.target,
                self._deliver, lambda error: self._fail_pending(error, connection))
        except ValueError:  # grpc: the channel was closed meanwhile
            return None, ClientClosedError()
        connection.start(self._write_lock)
        self._connection = connection
        return connection, None

    # ---- answers (on the reader thread) --------------------------------------------------------

    def _deliver(self, response: query_pb.QueryBatchResponse) -> None:
        with self._lock:
            batch = self._pending.pop(response.batch_id, None)
            if batch is None:
                return
            self._in_flight -= batch.queries
            self._backoff = self._initial_backoff  # the stream works: retry soon after a break
        if response.HasField("edit_ack"):
            self._client.raise_floor(response.edit_ack.version, batch.world)
        error: Optional[VoxcolError] = None
        if response.code != 0:
            error = BatchError(status_code(response.code), response.message, METHOD,
                               self._client.target, response)
        for chunk in batch.chunks:
            chunk.complete(response, error)
        if batch.future is not None:
            if error is None:
                batch.future.set_result(response)
            else:
                batch.future.set_exception(error)

    def _fail_pending(self, error: Optional[VoxcolError],
                      connection: Optional[QueryConnection] = None) -> None:
        """Fails the unanswered batches sent on `connection` (None: on any)."""
        if error is None:
            error = UnavailableError(grpc.StatusCode.UNAVAILABLE,
                                     "query stream ended before the answer", METHOD,
                                     self._client.target)
        with self._lock:
            failed = [batch_id for batch_id, batch in self._pending.items()
                      if connection is None or batch.connection is connection]
            batches = [self._pending.pop(batch_id) for batch_id in failed]
            self._in_flight -= sum(batch.queries for batch in batches)
        for batch in batches:
            batch.fail(error)

    # ---- lifetime ------------------------------------------------------------------------------

    def close(self, timeout: Optional[float] = None) -> Optional[VoxcolError]:
        """Half-closes the stream, waits (at most `timeout` seconds) until every sent batch is
        answered and returns the stream's error (None when it ended OK). Queries queued later
        open a new stream on their flush."""
        with self._write_lock:
            connection, self._connection = self._connection, None
            if connection is None:
                return None
            if not connection.finished:
                connection.half_close()
        connection.join(timeout)
        return connection.error

    def cancel(self) -> None:
        """Cancels the stream: every unanswered and every queued query fails with CANCELLED."""
        with self._write_lock:
            connection, self._connection = self._connection, None
        if connection is not None:
            connection.cancel()
            connection.join()
        error = CancelledError(grpc.StatusCode.CANCELLED, "query batcher cancelled", METHOD,
                               self._client.target)
        _Batch(self._take_queued(), None).fail(error)
        self._fail_pending(error)

    def __enter__(self) -> "QueryBatcher":
        return self

    def __exit__(self, *exc: object) -> None:
        """close(), then fails the queries that were queued but never flushed (CANCELLED)."""
        self.close()
        self.cancel()

    @property
    def queued(self) -> int:
        """Queries queued and not yet flushed."""
        with self._lock:
            return sum(len(chunk.encoded) for chunk in self._open)

    @property
    def in_flight(self) -> int:
        """Sent queries not yet answered."""
        with self._lock:
            return self._in_flight
