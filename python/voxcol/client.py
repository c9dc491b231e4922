"""The voxcol client: one channel, every RPC of the voxcol.v1 services (docs/sdk.md).

Every method takes either the RPC's request message (voxcol.v1) or plain Python values (tuples
for vectors, shapes from sphere()/capsule()/box()/hull(), see voxcol.messages) and returns the
RPC's response message. Failures raise voxcol.VoxcolError (a grpc.RpcError) with the status code
and the server's message; wrong argument types raise TypeError before anything is sent.

World selection (issue 22): connect(..., world="w") names the world of every request that names
none itself; `world=` on a call overrides it for that call. Read-your-writes floors: every edit
acknowledgement raises its world's floor (read_floor()), and the batcher's batches wait for it.
"""

from __future__ import annotations

import concurrent.futures
import itertools
import queue
import threading
from typing import (TYPE_CHECKING, Any, Callable, Dict, Iterable, Iterator, List, Optional,
                    Sequence, Tuple, TypeVar, Union, overload)

import grpc
from google.protobuf.message import Message

from voxcol import _wire
from voxcol import messages as m
from voxcol._stream import QueryConnection
from voxcol.channel import ChannelSecurity, Pem, make_channel
from voxcol.errors import (ClientClosedError, VoxcolError, error_from_code, error_from_rpc,
                           status_code)
from voxcol.floors import ReadFloors
from voxcol.v1 import admin_service_pb2 as admin_pb
from voxcol.v1 import admin_service_pb2_grpc as admin_grpc
from voxcol.v1 import body_service_pb2 as body_pb
from voxcol.v1 import body_service_pb2_grpc as body_grpc
from voxcol.v1 import edit_service_pb2 as edit_pb
from voxcol.v1 import edit_service_pb2_grpc as edit_grpc
from voxcol.v1 import query_service_pb2 as query_pb
from voxcol.v1 import query_service_pb2_grpc as query_grpc
from voxcol.v1 import replica_service_pb2 as replica_pb
from voxcol.v1 import replica_service_pb2_grpc as replica_grpc
from voxcol.v1 import types_pb2 as types_pb
from voxcol.v1 import world_service_pb2 as world_pb
from voxcol.v1 import world_service_pb2_grpc as world_grpc

if TYPE_CHECKING:
    from voxcol.batcher import QueryBatcher

Vector = m.Vector
Voxel = m.Voxel
R = TypeVar("R", bound=Message)

_HAS_WORLD: Dict[type, bool] = {}


def _has_world(request_type: type) -> bool:
    known = _HAS_WORLD.get(request_type)
    if known is None:
        known = _HAS_WORLD[request_type] = "world" in request_type.DESCRIPTOR.fields_by_name
    return known


def _message(request_type: type, first: Any, build: Callable[..., Any], args: tuple,
             kwargs: dict, what: str) -> Any:
    """`first` when it is the request message (then nothing else may be given), else
    build(first, *args, **kwargs)."""
    if isinstance(first, request_type):
        if args or kwargs:
            raise TypeError(f"{what}: pass either a {request_type.__name__} or values, not both")
        return first
    if isinstance(first, Message) and type(first).__name__.endswith("Request"):
        raise TypeError(f"{what}: expected a {request_type.__name__} or values, got a "
                        f"{type(first).__name__}")
    if build is None:
        raise TypeError(f"{what}: expected a {request_type.__name__}, got "
                        f"{type(first).__name__}")
    return build(first, *args, **kwargs)


def _timeout(value: Optional[float], name: str = "timeout") -> Optional[float]:
    if value is None:
        return None
    seconds = m.number(value, name)
    if not seconds > 0:
        raise ValueError(f"{name}: must be > 0 seconds, got {value!r}")
    return seconds


# ---- streams ------------------------------------------------------------------------------------

class Subscription:
    """The change feed (EditService.Subscribe): iterate for SubscribeResponse, cancel() to end.

    Iteration raises VoxcolError when the feed fails, and stops after cancel()."""

    def __init__(self, call: Any, target: str) -> None:
        self._call = call
        self._target = target
        self._cancelled = False

    def __iter__(self) -> Iterator[edit_pb.SubscribeResponse]:
        return self

    def __next__(self) -> edit_pb.SubscribeResponse:
        try:
            return next(self._call)
        except grpc.RpcError as e:
            if self._cancelled and e.code() == grpc.StatusCode.CANCELLED:
                raise StopIteration from None
            raise error_from_rpc(e, "EditService.Subscribe", self._target) from None

    def cancel(self) -> None:
        self._cancelled = True
        self._call.cancel()

    def __enter__(self) -> "Subscription":
        return self

    def __exit__(self, *exc: object) -> None:
        self.cancel()


class PathWatch:
    """A WatchPaths stream (QueryService.WatchPaths): watch() and unwatch() send requests;
    iterating yields the WatchPathsResponse events (REGISTERED, BLOCKED, SHORTER, UNWATCHED,
    REFUSED) as they come, until cancel(). A watch ends with its BLOCKED event.

    Iteration raises VoxcolError when the stream fails, and stops after cancel()."""

    def __init__(self, client: "Client", world: Optional[str]) -> None:
        self._client = client
        self._world = world
        self._requests: "queue.Queue[Optional[query_pb.WatchPathsRequest]]" = queue.Queue()
        self._call = client._stub_method("QueryService.WatchPaths")(
            iter(self._requests.get, None), metadata=client._metadata)
        self._cancelled = False

    def watch(self, watch_id: int, start: Any, *args: Any,
              path: Optional[query_pb.FindPathResponse] = None, shorter_margin: float = 0.0,
              **options: Any) -> None:
        """Registers watch `watch_id` of the path from start to goal (a FindPathRequest, or
        values as find_path()). With `path` (FindPath's answer for that request) its waypoints
        and version are watched; without, the server plans the path and sends it with
        REGISTERED. shorter_margin > 0 (world units) also asks for SHORTER events."""
        request = _message(query_pb.FindPathRequest, start, m.find_path_request, args, options,
                           "watch")
        watch = query_pb.PathWatch(
            watch_id=m.integer(watch_id, "watch_id"),
            path=self._client._with_world(request, self._world),
            shorter_margin=m.number(shorter_margin, "shorter_margin"))
        if path is not None:
            watch.waypoints.extend(path.waypoints)
            watch.version = path.version
        self._requests.put(query_pb.WatchPathsRequest(watch=watch))

    def send(self, request: query_pb.WatchPathsRequest) -> None:
        """Sends a WatchPathsRequest as it is (watch() and unwatch() build them)."""
        if not isinstance(request, query_pb.WatchPathsRequest):
            raise TypeError(f"send: expected a WatchPathsRequest, got {type(request).__name__}")
        self._requests.put(request)

    def done_writing(self) -> None:
        """Half-closes the stream: no more watch/unwatch requests; the server ends it once the
        events of the requests sent are written (iteration then stops)."""
        self._requests.put(None)

    def unwatch(self, watch_id: int) -> None:
        """Unregisters watch `watch_id` (answered by UNWATCHED, or REFUSED when unknown)."""
        self._requests.put(query_pb.WatchPathsRequest(unwatch=m.integer(watch_id, "watch_id")))

    def __iter__(self) -> Iterator[query_pb.WatchPathsResponse]:
        return self

    def __next__(self) -> query_pb.WatchPathsResponse:
        try:
            return next(self._call)
        except grpc.RpcError as e:
            if self._cancelled and e.code() == grpc.StatusCode.CANCELLED:
                raise StopIteration from None
            raise error_from_rpc(e, "QueryService.WatchPaths", self._client.target) from None

    def cancel(self) -> None:
        self._cancelled = True
        self._requests.put(None)
        self._call.cancel()

    def __enter__(self) -> "PathWatch":
        return self

    def __exit__(self, *exc: object) -> None:
        self.cancel()


class EditStream:
    """Responses of an EditStream call, one per batch in order; cancel() ends the call early.

    Every ack raises the read-your-writes floor of its batch's world."""

    def __init__(self, call: Any, target: str, worlds: Dict[int, str],
                 floors: ReadFloors) -> None:
        self._call = call
        self._target = target
        self._worlds = worlds
        self._floors = floors

    def __iter__(self) -> Iterator[edit_pb.EditStreamResponse]:
        return self

    def __next__(self) -> edit_pb.EditStreamResponse:
        try:
            response = next(self._call)
        except grpc.RpcError as e:
            raise error_from_rpc(e, "EditService.EditStream", self._target) from None
        if response.WhichOneof("result") == "ack":
            self._floors.raise_to(response.ack.version,
                                  self._worlds.pop(response.batch_id, ""))
        return response

    def cancel(self) -> None:
        self._call.cancel()


class QueryStream:
    """Batches on one QueryService.Query stream, each sent as given; submit() returns a future of
    the raw QueryBatchResponse (its `code` is the batch's outcome). For per-query futures, ticks
    and reconnection use Client.batcher().

    Batches may be answered out of order; each future is matched by batch id. When the stream
    ends every unanswered future fails with the stream's VoxcolError. Thread-safe."""

    def __init__(self, client: "Client", world: Optional[str] = None) -> None:
        self._client = client
        self._world = world
        self._pending: Dict[int, "concurrent.futures.Future[query_pb.QueryBatchResponse]"] = {}
        self._lock = threading.Lock()
        self._ids = itertools.count(1)
        self._closed = False
        self._connection = QueryConnection(
            client._query_method(), client._metadata, client.target,
            self._deliver, self._fail)
        self._connection.start(self._lock)

    def submit(self, queries: Iterable[m.Query] = (), *, min_version: int = 0,
               timeout_ms: int = 0, edits: Optional[edit_pb.ApplyEditsRequest] = None,
               raycasts: Optional[query_pb.RaycastArrays] = None,
               read_at: Optional[query_pb.ReadAt] = None
               ) -> "concurrent.futures.Future[query_pb.QueryBatchResponse]":
        """Sends one batch: QueryBatchResponse.results has one QueryResult per query, in order.

        With `edits` the batch is a game-server tick: the edits apply first and the queries read
        exactly the version they produced (QueryBatchResponse.edit_ack). With `raycasts`
        (raycast_arrays(...)) its rays are answered in QueryBatchResponse.raycasts.
        """
        request = query_pb.QueryBatchRequest(
            min_version=m.integer(min_version, "min_version"),
            timeout_ms=m.integer(timeout_ms, "timeout_ms"),
            queries=[m.query(q, i) for i, q in enumerate(queries)])
        if edits is not None:
            request.edits.CopyFrom(edits)
        if raycasts is not None:
            request.raycasts.CopyFrom(raycasts)
        if read_at is not None:
            request.read_at.CopyFrom(read_at)
        return self.send(request)

    def send(self, request: query_pb.QueryBatchRequest
             ) -> "concurrent.futures.Future[query_pb.QueryBatchResponse]":
        """Sends a QueryBatchRequest as it is, but for a batch id of the stream's own."""
        if not isinstance(request, query_pb.QueryBatchRequest):
            raise TypeError(f"expected a QueryBatchRequest, got {type(request).__name__}")
        request = self._client._with_world(request, self._world)
        future: "concurrent.futures.Future[query_pb.QueryBatchResponse]" = (
            concurrent.futures.Future())
        with self._lock:
            if self._closed:
                raise ClientClosedError("query stream")
            if self._connection.finished:
                raise self._connection.error or ClientClosedError("query stream")
            batch = query_pb.QueryBatchRequest()
            batch.CopyFrom(request)
            batch.batch_id = next(self._ids)
            self._pending[batch.batch_id] = future
            self._connection.write(batch)
        return future

    def close(self, timeout: Optional[float] = None) -> Optional[VoxcolError]:
        """Half-closes the stream, waits until every submitted batch is answered and returns the
        stream's error (None when it ended OK)."""
        with self._lock:
            if not self._closed:
                self._closed = True
                self._connection.half_close()
        self._connection.join(timeout)
        return self._connection.error

    def cancel(self) -> None:
        """Cancels the stream: unanswered futures fail with CANCELLED."""
        with self._lock:
            self._closed = True
        self._connection.cancel()
        self._connection.join()

    def _deliver(self, response: query_pb.QueryBatchResponse) -> None:
        with self._lock:
            future = self._pending.pop(response.batch_id, None)
        if future is not None:
            if response.HasField("edit_ack"):
                self._client.raise_floor(response.edit_ack.version, self._world)
            future.set_result(response)

    def _fail(self, error: Optional[VoxcolError]) -> None:
        with self._lock:
            pending, self._pending = self._pending, {}
        for future in pending.values():
            future.set_exception(error or VoxcolError(
                grpc.StatusCode.UNAVAILABLE, "query stream ended before the answer",
                "QueryService.Query", self._client.target))

    def __enter__(self) -> "QueryStream":
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()


# ---- the client ---------------------------------------------------------------------------------

_SERVICES = {
    "WorldService": world_grpc.WorldServiceStub, "QueryService": query_grpc.QueryServiceStub,
    "EditService": edit_grpc.EditServiceStub, "AdminService": admin_grpc.AdminServiceStub,
    "ReplicaService": replica_grpc.ReplicaServiceStub, "BodyService": body_grpc.BodyServiceStub,
}


class Client:
    """One channel to a voxcol server (use connect()). Every unary call gets `timeout` seconds as
    its deadline unless the call passes its own `timeout=`; streams have none unless given."""

    def __init__(self, channel: grpc.Channel, *, timeout: float = 10.0, world: str = "",
                 security: ChannelSecurity = ChannelSecurity(), target: str = "") -> None:
        self.channel = channel
        self.timeout = _timeout(timeout)
        if not isinstance(world, str):
            raise TypeError(f"world: expected a str, got {type(world).__name__}")
        self.world = world
        self.target = target
        self._metadata: Tuple[Tuple[str, str], ...] = security.metadata()
        self._floors = ReadFloors()
        self._closed = False
        self._stubs = {name: stub(channel) for name, stub in _SERVICES.items()}
        self._query: Any = None

    # -- lifetime
    @property
    def closed(self) -> bool:
        return self._closed

    def close(self) -> None:
        """Closes the channel: running calls and streams end with CANCELLED, later calls raise
        ClientClosedError."""
        if not self._closed:
            self._closed = True
            self.channel.close()

    def __enter__(self) -> "Client":
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()

    def wait_ready(self, timeout: Optional[float] = None) -> None:
        """Blocks until the channel is connected; UnavailableError naming the target when it is
        not within `timeout` seconds (default: the client's timeout)."""
        self._check_open()
        seconds = _timeout(timeout) or self.timeout
        try:
            grpc.channel_ready_future(self.channel).result(timeout=seconds)
        except grpc.FutureTimeoutError:
            raise error_from_code(grpc.StatusCode.UNAVAILABLE,
                                        f"not connected within {seconds:g} s",
                                        "connect", self.target) from None

    # -- read-your-writes floors (per world)
    def read_floor(self, world: Optional[str] = None) -> int:
        """The version of the newest edit this client had acknowledged in `world` (default: the
        client's world; "" is the default world); 0 when none."""
        return self._floors.get(self.world if world is None else world)

    def raise_floor(self, version: int, world: Optional[str] = None) -> None:
        """Raises the floor of `world`, e.g. to a version another client reported."""
        self._floors.raise_to(m.integer(version, "version"),
                              self.world if world is None else world)

    # -- plumbing
    def _check_open(self) -> None:
        if self._closed:
            raise ClientClosedError()

    def _stub_method(self, name: str) -> Any:
        service, method = name.split(".")
        return getattr(self._stubs[service], method)

    def _query_method(self) -> Any:
        """QueryService.Query taking encoded batches (bytes) as well as messages (_wire)."""
        if self._query is None:
            self._query = self.channel.stream_stream(
                "/voxcol.v1.QueryService/Query", request_serializer=_wire.serialize,
                response_deserializer=query_pb.QueryBatchResponse.FromString)
        return self._query

    def _with_world(self, request: R, world: Optional[str]) -> R:
        """`request` naming `world` (or the client's) when it names no world itself."""
        if world is not None and not isinstance(world, str):
            raise TypeError(f"world: expected a str, got {type(world).__name__}")
        if not _has_world(type(request)):
            return request
        named = getattr(request, "world")
        if world is not None and named and named != world:
            raise ValueError(f"world: the request names {named!r}, the call {world!r}")
        wanted = named or (self.world if world is None else world)
        if wanted == named:
            return request
        copy = type(request)()
        copy.CopyFrom(request)
        setattr(copy, "world", wanted)
        return copy

    def _call(self, name: str, request: Message, *, world: Optional[str] = None,
              timeout: Optional[float] = None, name_world: bool = True) -> Any:
        self._check_open()
        if name_world:
            request = self._with_world(request, world)
        deadline = _timeout(timeout) or self.timeout
        try:
            return self._stub_method(name)(request, timeout=deadline, metadata=self._metadata)
        except grpc.RpcError as e:
            raise error_from_rpc(e, name, self.target) from None
        except ValueError:
            if self._closed:  # grpc: "Cannot invoke RPC on closed channel!"
                raise ClientClosedError() from None
            raise

    def _edit(self, name: str, request: Message, world: Optional[str],
              timeout: Optional[float]) -> edit_pb.EditAck:
        request = self._with_world(request, world)
        ack = self._call(name, request, timeout=timeout, name_world=False)
        self._floors.raise_to(ack.version, getattr(request, "world", ""))
        return ack

    # -- WorldService
    def world_info(self, request: Optional[world_pb.GetWorldInfoRequest] = None, *,
                   world: Optional[str] = None,
                   timeout: Optional[float] = None) -> world_pb.GetWorldInfoResponse:
        """Bounds, voxel size, generator, seed and version of the world."""
        if request is None:
            request = world_pb.GetWorldInfoRequest()
        request = _message(world_pb.GetWorldInfoRequest, request, None, (), {}, "world_info")
        return self._call("WorldService.GetWorldInfo", request, world=world, timeout=timeout)

    @overload
    def create_world(self, request: world_pb.CreateWorldRequest, *,
                     timeout: Optional[float] = None) -> world_pb.WorldSummary: ...

    @overload
    def create_world(self, world: str, *, template_world: Optional[str] = None,
                     size_voxels: Optional[Voxel] = None, voxel_size: float = 0.0,
                     seed: int = 0, timeout: Optional[float] = None) -> world_pb.WorldSummary: ...

    def create_world(self, world: Any, *args: Any, timeout: Optional[float] = None,
                     **options: Any) -> world_pb.WorldSummary:
        """Creates world `world` (admin): generated from settings or a copy of template_world."""
        request = _message(world_pb.CreateWorldRequest, world, m.create_world_request, args,
                           options, "create_world")
        # The request's world is the new world's id: never filled in from the client's world.
        return self._call("WorldService.CreateWorld", request, timeout=timeout, name_world=False)

    def delete_world(self, world: Union[str, world_pb.DeleteWorldRequest], *,
                     timeout: Optional[float] = None) -> world_pb.DeleteWorldResponse:
        """Deletes world `world` (admin); the default world cannot be deleted."""
        if isinstance(world, str):
            if not world:
                raise ValueError("delete_world: name the world to delete")
            world = world_pb.DeleteWorldRequest(world=world)
        request = _message(world_pb.DeleteWorldRequest, world, None, (), {}, "delete_world")
        return self._call("WorldService.DeleteWorld", request, timeout=timeout,
                          name_world=False)

    def list_worlds(self, request: Optional[world_pb.ListWorldsRequest] = None, *,
                    skip_resident_bytes: bool = False,
                    timeout: Optional[float] = None) -> world_pb.ListWorldsResponse:
        """Every world on the server, sorted by id."""
        if request is None:
            request = world_pb.ListWorldsRequest(skip_resident_bytes=skip_resident_bytes)
        request = _message(world_pb.ListWorldsRequest, request, None, (), {}, "list_worlds")
        return self._call("WorldService.ListWorlds", request, timeout=timeout)

    # -- QueryService (keyword arguments as the voxcol.messages builders)
    @overload
    def raycast(self, request: query_pb.RaycastRequest, *, world: Optional[str] = None,
                timeout: Optional[float] = None) -> query_pb.RaycastResponse: ...

    @overload
    def raycast(self, origin: Vector, direction: Vector = ..., max_distance: float = ..., *,
                blocky: bool = ..., stop_at_water: bool = ..., all_hits: bool = ...,
                at_version: Optional[int] = ..., bodies: Optional[body_pb.BodyFilter] = ...,
                world: Optional[str] = None,
                timeout: Optional[float] = None) -> query_pb.RaycastResponse: ...

    def raycast(self, origin: Any, *args: Any, world: Optional[str] = None,
                timeout: Optional[float] = None, **options: Any) -> query_pb.RaycastResponse:
        request = _message(query_pb.RaycastRequest, origin, m.raycast_request, args, options,
                           "raycast")
        return self._call("QueryService.Raycast", request, world=world, timeout=timeout)

    @overload
    def sweep(self, request: query_pb.SweepRequest, *, world: Optional[str] = None,
              timeout: Optional[float] = None) -> query_pb.SweepResponse: ...

    @overload
    def sweep(self, shape: types_pb.Shape, position: Vector, direction: Vector, distance: float,
              *, rotation: Optional[Sequence[float]] = ..., all_hits: bool = ...,
              at_version: Optional[int] = ..., world: Optional[str] = None,
              timeout: Optional[float] = None) -> query_pb.SweepResponse: ...

    def sweep(self, shape: Any, *args: Any, world: Optional[str] = None,
              timeout: Optional[float] = None, **options: Any) -> query_pb.SweepResponse:
        request = _message(query_pb.SweepRequest, shape, m.sweep_request, args, options, "sweep")
        return self._call("QueryService.Sweep", request, world=world, timeout=timeout)

    @overload
    def overlap(self, request: query_pb.OverlapRequest, *, world: Optional[str] = None,
                timeout: Optional[float] = None) -> query_pb.OverlapResponse: ...

    @overload
    def overlap(self, shape: types_pb.Shape, position: Vector, *,
                rotation: Optional[Sequence[float]] = ..., penetration: bool = ...,
                at_version: Optional[int] = ..., bodies: Optional[body_pb.BodyFilter] = ...,
                world: Optional[str] = None,
                timeout: Optional[float] = None) -> query_pb.OverlapResponse: ...

    def overlap(self, shape: Any, *args: Any, world: Optional[str] = None,
                timeout: Optional[float] = None, **options: Any) -> query_pb.OverlapResponse:
        request = _message(query_pb.OverlapRequest, shape, m.overlap_request, args, options,
                           "overlap")
        return self._call("QueryService.Overlap", request, world=world, timeout=timeout)

    @overload
    def contacts(self, request: query_pb.ContactsRequest, *, world: Optional[str] = None,
                 timeout: Optional[float] = None) -> query_pb.ContactsResponse: ...

    @overload
    def contacts(self, shape: types_pb.Shape, position: Vector, *,
                 rotation: Optional[Sequence[float]] = ..., margin: float = ...,
                 skip_water: bool = ..., at_version: Optional[int] = ...,
                 world: Optional[str] = None,
                 timeout: Optional[float] = None) -> query_pb.ContactsResponse: ...

    def contacts(self, shape: Any, *args: Any, world: Optional[str] = None,
                 timeout: Optional[float] = None, **options: Any) -> query_pb.ContactsResponse:
        request = _message(query_pb.ContactsRequest, shape, m.contacts_request, args, options,
                           "contacts")
        return self._call("QueryService.Contacts", request, world=world, timeout=timeout)

    @overload
    def probe(self, request: query_pb.ProbeRequest, *, world: Optional[str] = None,
              timeout: Optional[float] = None) -> query_pb.ProbeResponse: ...

    @overload
    def probe(self, center: Vector, *, half_extents: Optional[Vector] = ...,
              radius: Optional[float] = ..., include_voxels: bool = ..., max_voxels: int = ...,
              at_version: Optional[int] = ..., world: Optional[str] = None,
              timeout: Optional[float] = None) -> query_pb.ProbeResponse: ...

    def probe(self, center: Any, *args: Any, world: Optional[str] = None,
              timeout: Optional[float] = None, **options: Any) -> query_pb.ProbeResponse:
        request = _message(query_pb.ProbeRequest, center, m.probe_request, args, options,
                           "probe")
        return self._call("QueryService.Probe", request, world=world, timeout=timeout)

    def move_characters(self, moves: Union[query_pb.MoveCharactersRequest,
                                           Iterable[query_pb.CharacterMove]], *,
                        at_version: Optional[int] = None, world: Optional[str] = None,
                        timeout: Optional[float] = None) -> query_pb.MoveCharactersResponse:
        """One tick of the character controller for every move (character_move(...))."""
        options = {} if at_version is None else {"at_version": at_version}
        request = _message(query_pb.MoveCharactersRequest, moves, m.move_characters_request,
                           (), options, "move_characters")
        return self._call("QueryService.MoveCharacters", request, world=world, timeout=timeout)

    @overload
    def validate_hit(self, request: query_pb.ValidateHitRequest, *, world: Optional[str] = None,
                     timeout: Optional[float] = None) -> query_pb.ValidateHitResponse: ...

    @overload
    def validate_hit(self, origin: Vector, direction: Vector, *,
                     claimed_hit: Optional[Vector] = ..., target_point: Optional[Vector] = ...,
                     tolerance: float = ..., at_version: Optional[int] = ...,
                     blocky: bool = ..., target_body: Optional[body_pb.BodyClaim] = ...,
                     world: Optional[str] = None,
                     timeout: Optional[float] = None) -> query_pb.ValidateHitResponse: ...

    def validate_hit(self, origin: Any, *args: Any, world: Optional[str] = None,
                     timeout: Optional[float] = None,
                     **options: Any) -> query_pb.ValidateHitResponse:
        """Lag-compensated hit validation: judges a client's shot against the terrain as of the
        version it saw (`at_version`); see HitVerdict."""
        request = _message(query_pb.ValidateHitRequest, origin, m.validate_hit_request, args,
                           options, "validate_hit")
        return self._call("QueryService.ValidateHit", request, world=world, timeout=timeout)

    @overload
    def find_path(self, request: query_pb.FindPathRequest, *, world: Optional[str] = None,
                  timeout: Optional[float] = None) -> query_pb.FindPathResponse: ...

    @overload
    def find_path(self, start: Vector, goal: Vector, *, profile: str = ...,
                  material_costs: Optional[Dict[int, float]] = ..., max_distance: float = ...,
                  at_version: Optional[int] = ..., world: Optional[str] = None,
                  timeout: Optional[float] = None, **agent: Any) -> query_pb.FindPathResponse: ...

    def find_path(self, start: Any, *args: Any, world: Optional[str] = None,
                  timeout: Optional[float] = None, **options: Any) -> query_pb.FindPathResponse:
        """The shortest walkable path for an agent profile (QueryService.FindPath): status
        (PATH_STATUS_OK, NO_PATH, START_OFF_MESH, GOAL_OFF_MESH, TOO_FAR), waypoints with their
        actions, length and version. Options as find_path_request()."""
        request = _message(query_pb.FindPathRequest, start, m.find_path_request, args, options,
                           "find_path")
        return self._call("QueryService.FindPath", request, world=world, timeout=timeout)

    def get_nav_mesh(self, request: query_pb.GetNavMeshRequest, *, world: Optional[str] = None,
                     timeout: Optional[float] = None) -> query_pb.GetNavMeshResponse:
        """The navmesh polygons of a box's tiles, for drawing (QueryService.GetNavMesh)."""
        return self._call("QueryService.GetNavMesh", request, world=world, timeout=timeout)

    def watch_paths(self, *, world: Optional[str] = None) -> PathWatch:
        """A WatchPaths stream (see PathWatch): watch paths, hear when edits block them."""
        self._check_open()
        return PathWatch(self, world)

    def watch_path(self, start: Any, *args: Any, world: Optional[str] = None,
                   shorter_margin: float = 0.0,
                   **options: Any) -> Iterator[query_pb.WatchPathsResponse]:
        """A generator of the events of one watched path from start to goal (values or a
        FindPathRequest, as find_path()): REGISTERED with the path the server planned, then
        SHORTER events, until the path is BLOCKED (the last event). Raises VoxcolError naming
        the field when the watch is refused. Closing the generator ends the stream."""
        with self.watch_paths(world=world) as stream:
            stream.watch(1, start, *args, shorter_margin=shorter_margin, **options)
            for event in stream:
                if event.event == query_pb.PATH_WATCH_EVENT_REFUSED:
                    raise error_from_code(status_code(event.error_code), event.error_message,
                                          "QueryService.WatchPaths", self.target)
                yield event
                if event.event == query_pb.PATH_WATCH_EVENT_BLOCKED:
                    return

    # -- BodyService
    def update_bodies(self, request: Any, *args: Any, world: Optional[str] = None,
                      timeout: Optional[float] = None,
                      **options: Any) -> body_pb.UpdateBodiesResponse:
        """One game tick's body changes (BodyService.UpdateBodies), all or nothing: an
        UpdateBodiesRequest, or a tick and the options of update_bodies_request() (create=,
        move=, remove=). Bodies are session state: not stored, not replicated."""
        request = _message(body_pb.UpdateBodiesRequest, request, m.update_bodies_request, args,
                           options, "update_bodies")
        return self._call("BodyService.UpdateBodies", request, world=world, timeout=timeout)

    def list_bodies(self, request: Optional[body_pb.ListBodiesRequest] = None, *,
                    world: Optional[str] = None,
                    timeout: Optional[float] = None) -> body_pb.ListBodiesResponse:
        """The live bodies at the latest tick and the tick window (BodyService.ListBodies)."""
        if request is None:
            request = body_pb.ListBodiesRequest()
        request = _message(body_pb.ListBodiesRequest, request, None, (), {}, "list_bodies")
        return self._call("BodyService.ListBodies", request, world=world, timeout=timeout)

    def batcher(self, **options: Any) -> "QueryBatcher":
        """A QueryBatcher on this client (options as QueryBatcher)."""
        from voxcol.batcher import QueryBatcher
        return QueryBatcher(self, **options)

    def query_stream(self, *, world: Optional[str] = None) -> QueryStream:
        """A raw Query stream for many batches (see QueryStream)."""
        self._check_open()
        return QueryStream(self, world)

    def query_batch(self, queries: Iterable[m.Query] = (), *, world: Optional[str] = None,
                    timeout: Optional[float] = None,
                    **options: Any) -> query_pb.QueryBatchResponse:
        """One batch on a stream of its own (options as QueryStream.submit); the raw response."""
        deadline = _timeout(timeout) or self.timeout
        with self.query_stream(world=world) as stream:
            future = stream.submit(queries, **options)
            try:
                return future.result(timeout=deadline)
            except concurrent.futures.TimeoutError:
                stream.cancel()
                raise error_from_code(grpc.StatusCode.DEADLINE_EXCEEDED,
                                            f"no answer within {deadline:g} s",
                                            "QueryService.Query", self.target) from None

    # -- EditService
    @overload
    def fill_ball(self, request: edit_pb.FillBallRequest, *, world: Optional[str] = None,
                  timeout: Optional[float] = None) -> edit_pb.EditAck: ...

    @overload
    def fill_ball(self, center: Vector, radius: float, material: int = 0, *,
                  world: Optional[str] = None,
                  timeout: Optional[float] = None) -> edit_pb.EditAck: ...

    def fill_ball(self, center: Any, *args: Any, world: Optional[str] = None,
                  timeout: Optional[float] = None, **options: Any) -> edit_pb.EditAck:
        """Fills (or with material 0, carves) a ball; the ack carries the new world version."""
        request = _message(edit_pb.FillBallRequest, center,
                           lambda *a, **k: m.fill_ball(*a, **k).fill_ball, args, options,
                           "fill_ball")
        return self._edit("EditService.FillBall", request, world, timeout)

    def apply_edits(self, primitives: Union[edit_pb.ApplyEditsRequest,
                                            Iterable[edit_pb.EditPrimitive]], *,
                    idempotency_key: str = "", expected_version: Optional[int] = None,
                    world: Optional[str] = None,
                    timeout: Optional[float] = None) -> edit_pb.EditAck:
        """An atomic batch of primitives (fill_ball(), fill_block(), ...) as one version."""
        options: Dict[str, Any] = {}
        if idempotency_key:
            options["idempotency_key"] = idempotency_key
        if expected_version is not None:
            options["expected_version"] = expected_version
        request = _message(edit_pb.ApplyEditsRequest, primitives, m.edits_request, (), options,
                           "apply_edits")
        return self._edit("EditService.ApplyEdits", request, world, timeout)

    def edit_stream(self, batches: Iterable[Union[edit_pb.ApplyEditsRequest,
                                                  edit_pb.EditStreamRequest]], *,
                    world: Optional[str] = None,
                    timeout: Optional[float] = None) -> EditStream:
        """EditStream: one response per batch, in order. Batches are sent as iterated;
        ApplyEditsRequests get batch ids 1, 2, ..., EditStreamRequests are sent as they are."""
        self._check_open()
        worlds: Dict[int, str] = {}

        def requests() -> Iterator[edit_pb.EditStreamRequest]:
            for i, batch in enumerate(batches, 1):
                if isinstance(batch, edit_pb.ApplyEditsRequest):
                    batch = edit_pb.EditStreamRequest(batch_id=i, edits=batch)
                elif not isinstance(batch, edit_pb.EditStreamRequest):
                    raise TypeError(f"edit_stream: batch {i} is a {type(batch).__name__}, not "
                                    f"an ApplyEditsRequest or EditStreamRequest")
                batch = self._with_world(batch, world)
                worlds[batch.batch_id] = batch.world
                yield batch

        call = self._stub_method("EditService.EditStream")(
            requests(), timeout=_timeout(timeout), metadata=self._metadata)
        return EditStream(call, self.target, worlds, self._floors)

    @overload
    def read_voxels(self, request: edit_pb.ReadVoxelsRequest, *, world: Optional[str] = None,
                    timeout: Optional[float] = None) -> edit_pb.ReadVoxelsResponse: ...

    @overload
    def read_voxels(self, lo: Voxel, hi: Voxel, *, world: Optional[str] = None,
                    timeout: Optional[float] = None) -> edit_pb.ReadVoxelsResponse: ...

    def read_voxels(self, lo: Any, *args: Any, world: Optional[str] = None,
                    timeout: Optional[float] = None) -> edit_pb.ReadVoxelsResponse:
        """Voxels [lo, hi) at one version; index (x-lo.x) + (z-lo.z)*nx + (y-lo.y)*nx*nz."""
        request = _message(edit_pb.ReadVoxelsRequest, lo, lambda lo, hi: edit_pb.ReadVoxelsRequest(
            region=m.voxel_box(lo, hi)), args, {}, "read_voxels")
        return self._call("EditService.ReadVoxels", request, world=world, timeout=timeout)

    @overload
    def write_voxels(self, request: edit_pb.WriteVoxelsRequest, *, world: Optional[str] = None,
                     timeout: Optional[float] = None) -> edit_pb.EditAck: ...

    @overload
    def write_voxels(self, lo: Voxel, hi: Voxel, materials: bytes, occupancies: bytes, *,
                     world: Optional[str] = None,
                     timeout: Optional[float] = None) -> edit_pb.EditAck: ...

    def write_voxels(self, lo: Any, *args: Any, world: Optional[str] = None,
                     timeout: Optional[float] = None) -> edit_pb.EditAck:
        """Overwrites voxels [lo, hi) (one material and occupancy byte per voxel, in read_voxels'
        order) as one version."""
        def build(lo: Voxel, hi: Voxel, materials: bytes,
                  occupancies: bytes) -> edit_pb.WriteVoxelsRequest:
            for name, value in (("materials", materials), ("occupancies", occupancies)):
                if not isinstance(value, (bytes, bytearray)):
                    raise TypeError(f"{name}: expected bytes, got {type(value).__name__}")
            return edit_pb.WriteVoxelsRequest(voxels=edit_pb.VoxelData(
                region=m.voxel_box(lo, hi), materials=bytes(materials),
                occupancies=bytes(occupancies)))
        request = _message(edit_pb.WriteVoxelsRequest, lo, build, args, {}, "write_voxels")
        return self._edit("EditService.WriteVoxels", request, world, timeout)

    def subscribe(self, lo: Union[None, Voxel, edit_pb.SubscribeRequest] = None,
                  hi: Optional[Voxel] = None, *, from_version: Optional[int] = None,
                  include_voxels: bool = False, include_empty: bool = False,
                  world: Optional[str] = None, timeout: Optional[float] = None) -> Subscription:
        """The change feed of region [lo, hi) (default the whole world), live until cancelled
        (or until `timeout` seconds, DEADLINE_EXCEEDED)."""
        self._check_open()
        if isinstance(lo, edit_pb.SubscribeRequest):
            if hi is not None or from_version is not None or include_voxels or include_empty:
                raise TypeError("subscribe: pass either a SubscribeRequest or values, not both")
            request = lo
        else:
            request = edit_pb.SubscribeRequest(include_voxels=include_voxels,
                                               include_empty=include_empty)
            if (lo is None) != (hi is None):
                raise ValueError("subscribe: give both lo and hi, or neither (the whole world)")
            if lo is not None and hi is not None:
                request.region.CopyFrom(m.voxel_box(lo, hi))
            if from_version is not None:
                request.from_version = m.integer(from_version, "from_version")
        request = self._with_world(request, world)
        call = self._stub_method("EditService.Subscribe")(
            request, timeout=_timeout(timeout), metadata=self._metadata)
        return Subscription(call, self.target)

    # -- AdminService
    def create_checkpoint(self, directory: Union[str, admin_pb.CreateCheckpointRequest], *,
                          world: Optional[str] = None,
                          timeout: Optional[float] = None) -> admin_pb.CreateCheckpointResponse:
        """Online backup into a new directory inside the server's --backup_root."""
        if isinstance(directory, str):
            directory = admin_pb.CreateCheckpointRequest(dir=directory)
        request = _message(admin_pb.CreateCheckpointRequest, directory, None, (), {},
                           "create_checkpoint")
        return self._call("AdminService.CreateCheckpoint", request, world=world,
                          timeout=timeout)

    @overload
    def export_region(self, request: admin_pb.ExportRegionRequest, *,
                      world: Optional[str] = None,
                      timeout: Optional[float] = None) -> admin_pb.ExportRegionResponse: ...

    @overload
    def export_region(self, lo: Voxel, hi: Voxel, *, world: Optional[str] = None,
                      timeout: Optional[float] = None) -> admin_pb.ExportRegionResponse: ...

    def export_region(self, lo: Any, *args: Any, world: Optional[str] = None,
                      timeout: Optional[float] = None) -> admin_pb.ExportRegionResponse:
        """Voxels [lo, hi) as a packed region (ExportRegionResponse.region)."""
        request = _message(admin_pb.ExportRegionRequest, lo,
                           lambda lo, hi: admin_pb.ExportRegionRequest(box=m.voxel_box(lo, hi)),
                           args, {}, "export_region")
        return self._call("AdminService.ExportRegion", request, world=world, timeout=timeout)

    def import_region(self, region: Union[bytes, admin_pb.ImportRegionRequest], *,
                      world: Optional[str] = None,
                      timeout: Optional[float] = None) -> edit_pb.EditAck:
        """Writes a packed region from export_region back where it came from, as one version."""
        if isinstance(region, (bytes, bytearray)):
            region = admin_pb.ImportRegionRequest(region=bytes(region))
        request = _message(admin_pb.ImportRegionRequest, region, None, (), {}, "import_region")
        return self._edit("AdminService.ImportRegion", request, world, timeout)

    # -- ReplicaService
    def replica_status(self, request: Optional[replica_pb.GetReplicaStatusRequest] = None, *,
                       timeout: Optional[float] = None) -> replica_pb.GetReplicaStatusResponse:
        """On a read replica (--replica_of): applied version and lag, per world."""
        if request is None:
            request = replica_pb.GetReplicaStatusRequest()
        request = _message(replica_pb.GetReplicaStatusRequest, request, None, (), {},
                           "replica_status")
        return self._call("ReplicaService.GetReplicaStatus", request, timeout=timeout)


def connect(address: str = "127.0.0.1:50051", *, world: str = "", timeout: float = 10.0,
            tls: bool = False, ca_pem: Optional[Pem] = None, cert_pem: Optional[Pem] = None,
            key_pem: Optional[Pem] = None, server_name: str = "", token: str = "",
            security: Optional[ChannelSecurity] = None,
            credentials: Optional[grpc.ChannelCredentials] = None,
            options: Optional[List[Tuple[str, object]]] = None) -> Client:
    """A client for the server at HOST:PORT.

    `world`: the world of every request that names none (default: the server's default world).
    `timeout`: the deadline of every unary call in seconds. TLS when `tls` is set or any PEM is
    given: `ca_pem` (PEM text; voxcol.read_pem(path) reads a file) verifies the server, else the
    system roots; `server_name` is the name expected in its certificate; `cert_pem` and `key_pem`
    for mutual TLS. `token` is sent as a bearer token on every call. `security` passes all of
    these as one ChannelSecurity instead; `credentials` (grpc.ssl_channel_credentials(...)) are
    ready-made channel credentials instead of the TLS options. `options`: extra gRPC channel
    options.
    """
    if security is None:
        security = ChannelSecurity(tls=tls, ca_pem=ca_pem, cert_pem=cert_pem, key_pem=key_pem,
                                   server_name=server_name, token=token)
    elif tls or ca_pem or cert_pem or key_pem or server_name or token:
        raise TypeError("connect: pass either security= or the separate TLS and token options")
    channel = make_channel(address, security, options, credentials)
    try:
        return Client(channel, timeout=timeout, world=world, security=security, target=address)
    except BaseException:
        channel.close()
        raise
