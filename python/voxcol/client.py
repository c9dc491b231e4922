"""A small typed wrapper over the voxcol.v1 gRPC API (docs/sdk.md).

Every method takes plain Python values (tuples for vectors, shapes from sphere()/capsule()/box()/
hull()) and returns the response message of the RPC (voxcol.v1 protobuf, see proto/voxcol/v1/).
Errors are grpc.RpcError with the server's status code and a message naming the bad field.
"""

from __future__ import annotations

import concurrent.futures
import itertools
import queue
import threading
from typing import Iterable, Iterator, Optional, Sequence, Union

import grpc

from voxcol.v1 import admin_service_pb2 as admin_pb
from voxcol.v1 import admin_service_pb2_grpc as admin_grpc
from voxcol.v1 import edit_service_pb2 as edit_pb
from voxcol.v1 import edit_service_pb2_grpc as edit_grpc
from voxcol.v1 import query_service_pb2 as query_pb
from voxcol.v1 import query_service_pb2_grpc as query_grpc
from voxcol.v1 import types_pb2 as types_pb
from voxcol.v1 import world_service_pb2 as world_pb
from voxcol.v1 import world_service_pb2_grpc as world_grpc

Vector = Sequence[float]
Voxel = Sequence[int]
Query = Union[query_pb.QueryRequest, query_pb.RaycastRequest, query_pb.SweepRequest,
              query_pb.OverlapRequest, query_pb.ContactsRequest, query_pb.ProbeRequest,
              query_pb.MoveCharactersRequest]


# ---- value helpers ------------------------------------------------------------------------------

def vec3(v: Vector) -> types_pb.Vec3:
    x, y, z = v
    return types_pb.Vec3(x=x, y=y, z=z)


def int3(v: Voxel) -> types_pb.Int3:
    x, y, z = v
    return types_pb.Int3(x=x, y=y, z=z)


def voxel_box(lo: Voxel, hi: Voxel) -> types_pb.VoxelBox:
    """Voxels [lo, hi): hi is exclusive."""
    return types_pb.VoxelBox(min=int3(lo), max=int3(hi))


def sphere(radius: float) -> types_pb.Shape:
    return types_pb.Shape(sphere=types_pb.SphereShape(radius=radius))


def capsule(half_height: float, radius: float) -> types_pb.Shape:
    return types_pb.Shape(capsule=types_pb.CapsuleShape(half_height=half_height, radius=radius))


def box(half_extents: Vector, convex_radius: float = 0.0) -> types_pb.Shape:
    return types_pb.Shape(box=types_pb.BoxShape(half_extents=vec3(half_extents),
                                                convex_radius=convex_radius))


def hull(points: Iterable[Vector], convex_radius: float = 0.0) -> types_pb.Shape:
    return types_pb.Shape(hull=types_pb.ConvexHullShape(points=[vec3(p) for p in points],
                                                        convex_radius=convex_radius))


def posed(shape: types_pb.Shape, position: Vector,
          rotation: Optional[Sequence[float]] = None) -> types_pb.PosedShape:
    """A shape at `position`, rotated by the unit quaternion (w, x, y, z) when given."""
    pose = types_pb.PosedShape(shape=shape, position=vec3(position))
    if rotation is not None:
        w, x, y, z = rotation
        pose.rotation.CopyFrom(types_pb.Quat(w=w, x=x, y=y, z=z))
    return pose


# ---- request builders (shared by the unary calls and the Query stream) --------------------------

def raycast_request(origin: Vector, direction: Vector = (0.0, -1.0, 0.0),
                    max_distance: float = 256.0, *, blocky: bool = False,
                    stop_at_water: bool = False, all_hits: bool = False) -> query_pb.RaycastRequest:
    return query_pb.RaycastRequest(
        origin=vec3(origin), direction=vec3(direction), max_distance=max_distance,
        mode=query_pb.RAYCAST_MODE_BLOCKY if blocky else query_pb.RAYCAST_MODE_SMOOTH,
        water_mode=(types_pb.WATER_MODE_STOP_AT_SURFACE if stop_at_water
                    else types_pb.WATER_MODE_PASS_THROUGH),
        all_hits=all_hits)


def raycast_arrays(origins: Iterable[Vector], directions: Iterable[Vector],
                   max_distance: Union[float, Iterable[float]] = 256.0, *, blocky: bool = False,
                   stop_at_water: bool = False) -> query_pb.RaycastArrays:
    """Many closest-hit raycasts as packed arrays (QueryBatchRequest.raycasts): one max_distance
    for every ray or one per ray. Answered in QueryBatchResponse.raycasts, one entry per ray."""
    distances = [float(max_distance)] if isinstance(max_distance, (int, float)) else list(
        max_distance)
    return query_pb.RaycastArrays(
        origins=[c for v in origins for c in v], directions=[c for v in directions for c in v],
        max_distances=distances,
        mode=query_pb.RAYCAST_MODE_BLOCKY if blocky else query_pb.RAYCAST_MODE_SMOOTH,
        water_mode=(types_pb.WATER_MODE_STOP_AT_SURFACE if stop_at_water
                    else types_pb.WATER_MODE_PASS_THROUGH))


def sweep_request(shape: types_pb.Shape, position: Vector, direction: Vector, distance: float, *,
                  rotation: Optional[Sequence[float]] = None,
                  all_hits: bool = False) -> query_pb.SweepRequest:
    return query_pb.SweepRequest(
        shape=posed(shape, position, rotation), direction=vec3(direction), distance=distance,
        collection=query_pb.HIT_COLLECTION_ALL if all_hits else query_pb.HIT_COLLECTION_CLOSEST)


def overlap_request(shape: types_pb.Shape, position: Vector, *,
                    rotation: Optional[Sequence[float]] = None,
                    penetration: bool = False) -> query_pb.OverlapRequest:
    return query_pb.OverlapRequest(shape=posed(shape, position, rotation),
                                   include_penetration=penetration)


def contacts_request(shape: types_pb.Shape, position: Vector, *,
                     rotation: Optional[Sequence[float]] = None, margin: float = 0.0,
                     skip_water: bool = False) -> query_pb.ContactsRequest:
    return query_pb.ContactsRequest(shape=posed(shape, position, rotation), margin=margin,
                                    skip_water=skip_water)


def probe_request(center: Vector, *, half_extents: Optional[Vector] = None,
                  radius: Optional[float] = None, include_voxels: bool = False,
                  max_voxels: int = 0) -> query_pb.ProbeRequest:
    """A box probe (half_extents) or a sphere probe (radius)."""
    if (half_extents is None) == (radius is None):
        raise ValueError("probe: give exactly one of half_extents and radius")
    request = query_pb.ProbeRequest(include_voxels=include_voxels, max_voxels=max_voxels)
    if radius is not None:
        request.sphere.CopyFrom(query_pb.ProbeSphere(center=vec3(center), radius=radius))
    else:
        request.box.CopyFrom(query_pb.ProbeBox(center=vec3(center),
                                               half_extents=vec3(half_extents)))
    return request


def character_move(position: Vector, displacement: Vector, *, radius: float = 0.4,
                   half_height: float = 0.9, client_id: int = 0) -> query_pb.CharacterMove:
    return query_pb.CharacterMove(client_id=client_id, radius=radius, half_height=half_height,
                                  position=vec3(position), displacement=vec3(displacement))


def fill_ball(center: Vector, radius: float, material: int = 0) -> edit_pb.EditPrimitive:
    """A ball primitive for apply_edits; material 0 (air) carves."""
    return edit_pb.EditPrimitive(fill_ball=edit_pb.FillBallRequest(
        center=vec3(center), radius=radius, material=material))


def fill_block(center: Vector, size: Vector, material: int) -> edit_pb.EditPrimitive:
    return edit_pb.EditPrimitive(fill_block=edit_pb.FillBlock(
        center=vec3(center), size=vec3(size), material=material))


def edits_request(primitives: Iterable[edit_pb.EditPrimitive], *,
                  idempotency_key: str = "",
                  expected_version: Optional[int] = None) -> edit_pb.ApplyEditsRequest:
    request = edit_pb.ApplyEditsRequest(primitives=list(primitives),
                                        idempotency_key=idempotency_key)
    if expected_version is not None:
        request.expected_version = expected_version
    return request


def query(request: Query, client_id: int = 0) -> query_pb.QueryRequest:
    """Wraps a typed request as one query of a batch."""
    if isinstance(request, query_pb.QueryRequest):
        return request
    fields = {query_pb.RaycastRequest: "raycast", query_pb.SweepRequest: "sweep",
              query_pb.OverlapRequest: "overlap", query_pb.ContactsRequest: "contacts",
              query_pb.ProbeRequest: "probe", query_pb.MoveCharactersRequest: "move_characters"}
    field = fields.get(type(request))
    if field is None:
        raise TypeError(f"not a query request: {type(request).__name__}")
    wrapped = query_pb.QueryRequest(client_id=client_id)
    getattr(wrapped, field).CopyFrom(request)
    return wrapped


# ---- streams ------------------------------------------------------------------------------------

class Subscription:
    """The change feed (EditService.Subscribe): iterate for SubscribeResponse, cancel() to end."""

    def __init__(self, call):
        self._call = call

    def __iter__(self) -> Iterator[edit_pb.SubscribeResponse]:
        return iter(self._call)

    def __next__(self) -> edit_pb.SubscribeResponse:
        return next(self._call)

    def cancel(self) -> None:
        self._call.cancel()

    def __enter__(self) -> "Subscription":
        return self

    def __exit__(self, *exc) -> None:
        self.cancel()


class QueryStream:
    """Batches on one QueryService.Query stream; submit() returns a future of the batch response.

    Batches may be answered out of order; each future is matched by batch id. When the stream ends
    every unanswered future fails with the stream's grpc.RpcError. Thread-safe.
    """

    _END = object()

    def __init__(self, stub: query_grpc.QueryServiceStub):
        self._requests: "queue.Queue" = queue.Queue()
        self._pending: dict = {}
        self._lock = threading.Lock()
        self._ids = itertools.count(1)
        self._closed = False
        self._call = stub.Query(iter(self._requests.get, self._END))
        self._reader = threading.Thread(target=self._read, daemon=True)
        self._reader.start()

    def submit(self, queries: Iterable[Query] = (), *, min_version: int = 0, timeout_ms: int = 0,
               edits: Optional[edit_pb.ApplyEditsRequest] = None,
               raycasts: Optional[query_pb.RaycastArrays] = None
               ) -> "concurrent.futures.Future[query_pb.QueryBatchResponse]":
        """Sends one batch: QueryBatchResponse.results has one QueryResult per query, in order.

        With `edits` the batch is a game-server tick: the edits apply first and the queries read
        exactly the version they produced (QueryBatchResponse.edit_ack). With `raycasts`
        (raycast_arrays(...)) its rays are answered in QueryBatchResponse.raycasts.
        """
        future: concurrent.futures.Future = concurrent.futures.Future()
        request = query_pb.QueryBatchRequest(
            batch_id=next(self._ids), min_version=min_version, timeout_ms=timeout_ms,
            queries=[query(q, i) for i, q in enumerate(queries)])
        if edits is not None:
            request.edits.CopyFrom(edits)
        if raycasts is not None:
            request.raycasts.CopyFrom(raycasts)
        with self._lock:
            if self._closed:
                raise RuntimeError("query stream is closed")
            self._pending[request.batch_id] = future
            self._requests.put(request)
        return future

    def close(self) -> None:
        """Half-closes the stream and waits until every submitted batch is answered."""
        with self._lock:
            if not self._closed:
                self._closed = True
                self._requests.put(self._END)
        self._reader.join()

    def _read(self) -> None:
        error: Optional[BaseException] = None
        try:
            for response in self._call:
                with self._lock:
                    future = self._pending.pop(response.batch_id, None)
                if future is not None:
                    future.set_result(response)
        except grpc.RpcError as e:
            error = e
        with self._lock:
            pending, self._pending = self._pending, {}
        for future in pending.values():
            future.set_exception(error or RuntimeError("query stream ended before the answer"))

    def __enter__(self) -> "QueryStream":
        return self

    def __exit__(self, *exc) -> None:
        self.close()


# ---- the client ---------------------------------------------------------------------------------

class Client:
    """One channel to a voxcol server; every unary call gets `timeout` seconds as its deadline."""

    def __init__(self, channel: grpc.Channel, timeout: float = 10.0):
        self.channel = channel
        self.timeout = timeout
        self._world = world_grpc.WorldServiceStub(channel)
        self._query = query_grpc.QueryServiceStub(channel)
        self._edit = edit_grpc.EditServiceStub(channel)
        self._admin = admin_grpc.AdminServiceStub(channel)

    def close(self) -> None:
        self.channel.close()

    def __enter__(self) -> "Client":
        return self

    def __exit__(self, *exc) -> None:
        self.close()

    # -- world
    def world_info(self) -> world_pb.GetWorldInfoResponse:
        return self._world.GetWorldInfo(world_pb.GetWorldInfoRequest(), timeout=self.timeout)

    # -- queries (keyword arguments as the *_request builders above)
    def raycast(self, origin: Vector, direction: Vector = (0.0, -1.0, 0.0),
                max_distance: float = 256.0, **options) -> query_pb.RaycastResponse:
        return self._query.Raycast(raycast_request(origin, direction, max_distance, **options),
                                   timeout=self.timeout)

    def sweep(self, shape: types_pb.Shape, position: Vector, direction: Vector, distance: float,
              **options) -> query_pb.SweepResponse:
        return self._query.Sweep(sweep_request(shape, position, direction, distance, **options),
                                 timeout=self.timeout)

    def overlap(self, shape: types_pb.Shape, position: Vector,
                **options) -> query_pb.OverlapResponse:
        return self._query.Overlap(overlap_request(shape, position, **options),
                                   timeout=self.timeout)

    def contacts(self, shape: types_pb.Shape, position: Vector,
                 **options) -> query_pb.ContactsResponse:
        return self._query.Contacts(contacts_request(shape, position, **options),
                                    timeout=self.timeout)

    def probe(self, center: Vector, **options) -> query_pb.ProbeResponse:
        return self._query.Probe(probe_request(center, **options), timeout=self.timeout)

    def move_characters(self, moves: Iterable[query_pb.CharacterMove]
                        ) -> query_pb.MoveCharactersResponse:
        return self._query.MoveCharacters(query_pb.MoveCharactersRequest(moves=list(moves)),
                                          timeout=self.timeout)

    def query_stream(self) -> QueryStream:
        """A Query stream for many batches (see QueryStream)."""
        return QueryStream(self._query)

    def query_batch(self, queries: Iterable[Query] = (), **options
                    ) -> query_pb.QueryBatchResponse:
        """One batch on a stream of its own (options as QueryStream.submit)."""
        with self.query_stream() as stream:
            return stream.submit(queries, **options).result(timeout=self.timeout)

    # -- edits
    def fill_ball(self, center: Vector, radius: float, material: int = 0) -> edit_pb.EditAck:
        """Fills (or with material 0, carves) a ball; the ack carries the new world version."""
        request = edit_pb.FillBallRequest(center=vec3(center), radius=radius, material=material)
        return self._edit.FillBall(request, timeout=self.timeout)

    def apply_edits(self, primitives: Iterable[edit_pb.EditPrimitive], *,
                    idempotency_key: str = "",
                    expected_version: Optional[int] = None) -> edit_pb.EditAck:
        """An atomic batch of primitives (fill_ball(), fill_block(), ...) as one version."""
        request = edits_request(primitives, idempotency_key=idempotency_key,
                                expected_version=expected_version)
        return self._edit.ApplyEdits(request, timeout=self.timeout)

    def edit_stream(self, batches: Iterable[edit_pb.ApplyEditsRequest]
                    ) -> Iterator[edit_pb.EditStreamResponse]:
        """EditStream: one response per batch, in order (the batches are sent as iterated)."""
        requests = (edit_pb.EditStreamRequest(batch_id=i, edits=b)
                    for i, b in enumerate(batches, 1))
        return iter(self._edit.EditStream(requests))

    def read_voxels(self, lo: Voxel, hi: Voxel) -> edit_pb.ReadVoxelsResponse:
        """Voxels [lo, hi) at one version; index (x-lo.x) + (z-lo.z)*nx + (y-lo.y)*nx*nz."""
        return self._edit.ReadVoxels(edit_pb.ReadVoxelsRequest(region=voxel_box(lo, hi)),
                                     timeout=self.timeout)

    def write_voxels(self, lo: Voxel, hi: Voxel, materials: bytes,
                     occupancies: bytes) -> edit_pb.EditAck:
        data = edit_pb.VoxelData(region=voxel_box(lo, hi), materials=materials,
                                 occupancies=occupancies)
        return self._edit.WriteVoxels(edit_pb.WriteVoxelsRequest(voxels=data),
                                      timeout=self.timeout)

    def subscribe(self, lo: Optional[Voxel] = None, hi: Optional[Voxel] = None, *,
                  from_version: Optional[int] = None,
                  include_voxels: bool = False) -> Subscription:
        """The change feed of region [lo, hi) (default the whole world), live until cancelled."""
        request = edit_pb.SubscribeRequest(include_voxels=include_voxels)
        if lo is not None and hi is not None:
            request.region.CopyFrom(voxel_box(lo, hi))
        if from_version is not None:
            request.from_version = from_version
        return Subscription(self._edit.Subscribe(request))

    # -- admin
    def create_checkpoint(self, directory: str) -> admin_pb.CreateCheckpointResponse:
        """Online backup into a new directory inside the server's --backup_root."""
        return self._admin.CreateCheckpoint(admin_pb.CreateCheckpointRequest(dir=directory),
                                            timeout=self.timeout)

    def export_region(self, lo: Voxel, hi: Voxel) -> admin_pb.ExportRegionResponse:
        """Voxels [lo, hi) as a packed region (ExportRegionResponse.region)."""
        return self._admin.ExportRegion(admin_pb.ExportRegionRequest(box=voxel_box(lo, hi)),
                                        timeout=self.timeout)

    def import_region(self, region: bytes) -> edit_pb.EditAck:
        """Writes a packed region from export_region back where it came from, as one version."""
        return self._admin.ImportRegion(admin_pb.ImportRegionRequest(region=region),
                                        timeout=self.timeout)


def connect(address: str = "127.0.0.1:50051", *, timeout: float = 10.0,
            credentials: Optional[grpc.ChannelCredentials] = None) -> Client:
    """A client for the server at HOST:PORT (TLS when `credentials` are given)."""
    channel = (grpc.secure_channel(address, credentials) if credentials is not None
               else grpc.insecure_channel(address))
    return Client(channel, timeout=timeout)
