"""Builders of voxcol.v1 messages from plain Python values (docs/sdk.md, "The wrapper").

Vectors are sequences of three numbers (tuples, lists) or the Vec3 / Int3 message itself; shapes
come from sphere(), capsule(), box() and hull(). Every builder checks its arguments' types and
raises TypeError naming the argument, so a mistake is reported before anything is sent (the
server still validates values and answers INVALID_ARGUMENT naming the field).
"""

from __future__ import annotations

import numbers
from typing import Iterable, Optional, Sequence, Union

from voxcol.v1 import body_service_pb2 as body_pb
from voxcol.v1 import edit_service_pb2 as edit_pb
from voxcol.v1 import query_service_pb2 as query_pb
from voxcol.v1 import types_pb2 as types_pb
from voxcol.v1 import world_service_pb2 as world_pb

Vector = Union[Sequence[float], types_pb.Vec3]
Voxel = Union[Sequence[int], types_pb.Int3]
#: A query of a Query batch: a QueryRequest or one of the typed requests it wraps.
Query = Union[query_pb.QueryRequest, query_pb.RaycastRequest, query_pb.SweepRequest,
              query_pb.OverlapRequest, query_pb.ContactsRequest, query_pb.ProbeRequest,
              query_pb.MoveCharactersRequest, query_pb.FindPathRequest]

# The QueryRequest field (and QueryResult field) of each typed query request.
QUERY_FIELDS = {
    query_pb.RaycastRequest: "raycast", query_pb.SweepRequest: "sweep",
    query_pb.OverlapRequest: "overlap", query_pb.ContactsRequest: "contacts",
    query_pb.ProbeRequest: "probe", query_pb.MoveCharactersRequest: "move_characters",
    query_pb.FindPathRequest: "find_path",
}


# ---- argument checks ----------------------------------------------------------------------------

def _describe(value: object) -> str:
    text = repr(value)
    return f"{type(value).__name__} {text if len(text) <= 60 else text[:57] + '...'}"


def number(value: object, name: str) -> float:
    """`value` as a float; TypeError naming `name` unless it is a real number (not a bool)."""
    if isinstance(value, bool) or not isinstance(value, numbers.Real):
        raise TypeError(f"{name}: expected a number, got {_describe(value)}")
    return float(value)


def integer(value: object, name: str) -> int:
    if isinstance(value, bool) or not isinstance(value, numbers.Integral):
        raise TypeError(f"{name}: expected an integer, got {_describe(value)}")
    return int(value)


def _components(value: object, name: str, count: int, check) -> list:
    """The `count` components of a vector (any iterable: tuple, list, numpy array)."""
    items = None
    if not isinstance(value, (str, bytes)):
        try:
            items = list(value)  # type: ignore[call-overload]
        except TypeError:
            pass
    if items is None or len(items) != count:
        raise TypeError(f"{name}: expected {count} numbers, got {_describe(value)}")
    return [check(c, f"{name}[{i}]") for i, c in enumerate(items)]


def vec3(v: Vector, name: str = "vector") -> types_pb.Vec3:
    if isinstance(v, types_pb.Vec3):
        return v
    x, y, z = _components(v, name, 3, number)
    return types_pb.Vec3(x=x, y=y, z=z)


def int3(v: Voxel, name: str = "voxel") -> types_pb.Int3:
    if isinstance(v, types_pb.Int3):
        return v
    x, y, z = _components(v, name, 3, integer)
    return types_pb.Int3(x=x, y=y, z=z)


def voxel_box(lo: Voxel, hi: Voxel) -> types_pb.VoxelBox:
    """Voxels [lo, hi): hi is exclusive."""
    return types_pb.VoxelBox(min=int3(lo, "lo"), max=int3(hi, "hi"))


def read_at(version: Optional[int] = None, *,
            server_time_micros: Optional[int] = None) -> query_pb.ReadAt:
    """A past version to read (lag compensation): a world version or a server time."""
    if (version is None) == (server_time_micros is None):
        raise ValueError("read_at: give exactly one of version and server_time_micros")
    if version is not None:
        return query_pb.ReadAt(at_version=integer(version, "at_version"))
    return query_pb.ReadAt(at_server_time_micros=integer(server_time_micros,
                                                         "at_server_time_micros"))


def _set_read_at(request, at_version: Optional[int]):
    if at_version is not None:
        request.read_at.CopyFrom(read_at(at_version))
    return request


def _shape(shape: object) -> types_pb.Shape:
    if not isinstance(shape, types_pb.Shape):
        raise TypeError(f"shape: expected a voxcol shape (sphere(), capsule(), box(), hull()), "
                        f"got {_describe(shape)}")
    return shape


# ---- shapes -------------------------------------------------------------------------------------

def sphere(radius: float) -> types_pb.Shape:
    return types_pb.Shape(sphere=types_pb.SphereShape(radius=number(radius, "radius")))


def capsule(half_height: float, radius: float) -> types_pb.Shape:
    return types_pb.Shape(capsule=types_pb.CapsuleShape(
        half_height=number(half_height, "half_height"), radius=number(radius, "radius")))


def box(half_extents: Vector, convex_radius: float = 0.0) -> types_pb.Shape:
    return types_pb.Shape(box=types_pb.BoxShape(
        half_extents=vec3(half_extents, "half_extents"),
        convex_radius=number(convex_radius, "convex_radius")))


def hull(points: Iterable[Vector], convex_radius: float = 0.0) -> types_pb.Shape:
    return types_pb.Shape(hull=types_pb.ConvexHullShape(
        points=[vec3(p, f"points[{i}]") for i, p in enumerate(points)],
        convex_radius=number(convex_radius, "convex_radius")))


def posed(shape: types_pb.Shape, position: Vector,
          rotation: Optional[Sequence[float]] = None) -> types_pb.PosedShape:
    """A shape at `position`, rotated by the unit quaternion (w, x, y, z) when given."""
    pose = types_pb.PosedShape(shape=_shape(shape), position=vec3(position, "position"))
    if rotation is not None:
        w, x, y, z = _components(rotation, "rotation", 4, number)
        pose.rotation.CopyFrom(types_pb.Quat(w=w, x=x, y=y, z=z))
    return pose


# ---- query requests (unary calls and Query batches) ---------------------------------------------

def _raycast_mode(blocky: bool) -> int:
    return query_pb.RAYCAST_MODE_BLOCKY if blocky else query_pb.RAYCAST_MODE_SMOOTH


def _water_mode(stop_at_water: bool) -> int:
    return (types_pb.WATER_MODE_STOP_AT_SURFACE if stop_at_water
            else types_pb.WATER_MODE_PASS_THROUGH)


def raycast_request(origin: Vector, direction: Vector = (0.0, -1.0, 0.0),
                    max_distance: float = 256.0, *, blocky: bool = False,
                    stop_at_water: bool = False, all_hits: bool = False,
                    at_version: Optional[int] = None,
                    bodies: Optional[body_pb.BodyFilter] = None) -> query_pb.RaycastRequest:
    """A raycast; `bodies` (a body_filter()) makes it see bodies too (first_kind, body)."""
    request = query_pb.RaycastRequest(
        origin=vec3(origin, "origin"), direction=vec3(direction, "direction"),
        max_distance=number(max_distance, "max_distance"), mode=_raycast_mode(blocky),
        water_mode=_water_mode(stop_at_water), all_hits=all_hits)
    if bodies is not None:
        if not isinstance(bodies, body_pb.BodyFilter):
            raise TypeError(f"bodies: expected a BodyFilter (body_filter()), got {_describe(bodies)}")
        request.body_filter.CopyFrom(bodies)
    return _set_read_at(request, at_version)


_BODY_SCOPES = {"both": body_pb.BODY_SCOPE_TERRAIN_AND_BODIES, "bodies": body_pb.BODY_SCOPE_BODIES,
                "terrain": body_pb.BODY_SCOPE_TERRAIN}


def body_filter(tick: Optional[int] = None, *, scope: str = "both", layer_mask: int = 0,
                ignore_ids: Iterable[int] = ()) -> body_pb.BodyFilter:
    """What a query sees: `scope` "both" (terrain and bodies), "bodies" or "terrain"; bodies at
    game tick `tick` (None: the latest), whose layer matches `layer_mask` (0: all), but never
    those in `ignore_ids` (e.g. the shooter)."""
    if scope not in _BODY_SCOPES:
        raise ValueError(f"scope: one of {sorted(_BODY_SCOPES)}, got {scope!r}")
    f = body_pb.BodyFilter(scope=_BODY_SCOPES[scope], layer_mask=integer(layer_mask, "layer_mask"),
                           ignore_ids=[integer(i, f"ignore_ids[{n}]")
                                       for n, i in enumerate(ignore_ids)])
    if tick is not None:
        f.tick = integer(tick, "tick")
    return f


def body_part(part_id: int, shape: types_pb.Shape, position: Vector = (0.0, 0.0, 0.0),
              rotation: Optional[Sequence[float]] = None) -> body_pb.BodyPart:
    """One part (hitbox) of a body: a shape placed in the body frame."""
    part = body_pb.BodyPart(part_id=integer(part_id, "part_id"), shape=_shape(shape),
                            position=vec3(position, "position"))
    if rotation is not None:
        w, x, y, z = _components(rotation, "rotation", 4, number)
        part.rotation.CopyFrom(types_pb.Quat(w=w, x=x, y=y, z=z))
    return part


def body(body_id: int, position: Vector, parts: Iterable[body_pb.BodyPart], *,
         rotation: Optional[Sequence[float]] = None, layer: int = 1,
         owner: int = 0) -> body_pb.BodyCreate:
    """A body to create (UpdateBodiesRequest.create): its parts, pose, layer and owner."""
    b = body_pb.BodyCreate(id=integer(body_id, "id"), owner=integer(owner, "owner"),
                           layer=integer(layer, "layer"), position=vec3(position, "position"),
                           parts=list(parts))
    if rotation is not None:
        w, x, y, z = _components(rotation, "rotation", 4, number)
        b.rotation.CopyFrom(types_pb.Quat(w=w, x=x, y=y, z=z))
    return b


def update_bodies_request(tick: int, *, create: Iterable[body_pb.BodyCreate] = (),
                          move: Optional[dict] = None,
                          remove: Iterable[int] = ()) -> body_pb.UpdateBodiesRequest:
    """One game tick's body changes: bodies to create (body()), moves as {id: position} or
    {id: (position, rotation)}, ids to remove."""
    request = body_pb.UpdateBodiesRequest(tick=integer(tick, "tick"), create=list(create),
                                          remove=[integer(i, "remove") for i in remove])
    for body_id, pose in (move or {}).items():
        m = request.move.add(id=integer(body_id, "move"))
        if isinstance(pose, tuple) and len(pose) == 2 and not isinstance(pose[0], numbers.Real):
            position, rotation = pose
            w, x, y, z = _components(rotation, f"move[{body_id}].rotation", 4, number)
            m.rotation.CopyFrom(types_pb.Quat(w=w, x=x, y=y, z=z))
        else:
            position = pose
        m.position.CopyFrom(vec3(position, f"move[{body_id}].position"))
    return request


def raycast_arrays(origins: Iterable[Vector], directions: Iterable[Vector],
                   max_distance: Union[float, Iterable[float]] = 256.0, *, blocky: bool = False,
                   stop_at_water: bool = False) -> query_pb.RaycastArrays:
    """Many closest-hit raycasts as packed arrays (QueryBatchRequest.raycasts): one max_distance
    for every ray or one per ray. Answered in QueryBatchResponse.raycasts, one entry per ray."""
    if isinstance(max_distance, numbers.Real):
        distances = [number(max_distance, "max_distance")]
    else:
        distances = [number(d, f"max_distance[{i}]") for i, d in enumerate(max_distance)]
    packed_origins = [c for i, v in enumerate(origins) for c in _components(
        v, f"origins[{i}]", 3, number)]
    packed_directions = [c for i, v in enumerate(directions) for c in _components(
        v, f"directions[{i}]", 3, number)]
    return query_pb.RaycastArrays(
        origins=packed_origins, directions=packed_directions, max_distances=distances,
        mode=_raycast_mode(blocky), water_mode=_water_mode(stop_at_water))


def sweep_request(shape: types_pb.Shape, position: Vector, direction: Vector, distance: float, *,
                  rotation: Optional[Sequence[float]] = None, all_hits: bool = False,
                  at_version: Optional[int] = None) -> query_pb.SweepRequest:
    request = query_pb.SweepRequest(
        shape=posed(shape, position, rotation), direction=vec3(direction, "direction"),
        distance=number(distance, "distance"),
        collection=query_pb.HIT_COLLECTION_ALL if all_hits else query_pb.HIT_COLLECTION_CLOSEST)
    return _set_read_at(request, at_version)


def overlap_request(shape: types_pb.Shape, position: Vector, *,
                    rotation: Optional[Sequence[float]] = None, penetration: bool = False,
                    at_version: Optional[int] = None,
                    bodies: Optional[body_pb.BodyFilter] = None) -> query_pb.OverlapRequest:
    """An exact overlap; `bodies` (a body_filter()) also lists the body parts it overlaps."""
    request = query_pb.OverlapRequest(shape=posed(shape, position, rotation),
                                      include_penetration=penetration)
    if bodies is not None:
        if not isinstance(bodies, body_pb.BodyFilter):
            raise TypeError(f"bodies: expected a BodyFilter (body_filter()), got {_describe(bodies)}")
        request.body_filter.CopyFrom(bodies)
    return _set_read_at(request, at_version)


def contacts_request(shape: types_pb.Shape, position: Vector, *,
                     rotation: Optional[Sequence[float]] = None, margin: float = 0.0,
                     skip_water: bool = False,
                     at_version: Optional[int] = None) -> query_pb.ContactsRequest:
    request = query_pb.ContactsRequest(shape=posed(shape, position, rotation),
                                       margin=number(margin, "margin"), skip_water=skip_water)
    return _set_read_at(request, at_version)


def probe_request(center: Vector, *, half_extents: Optional[Vector] = None,
                  radius: Optional[float] = None, include_voxels: bool = False,
                  max_voxels: int = 0, at_version: Optional[int] = None) -> query_pb.ProbeRequest:
    """A box probe (half_extents) or a sphere probe (radius)."""
    if (half_extents is None) == (radius is None):
        raise ValueError("probe: give exactly one of half_extents and radius")
    request = query_pb.ProbeRequest(include_voxels=include_voxels,
                                    max_voxels=integer(max_voxels, "max_voxels"))
    if radius is not None:
        request.sphere.CopyFrom(query_pb.ProbeSphere(center=vec3(center, "center"),
                                                     radius=number(radius, "radius")))
    else:
        request.box.CopyFrom(query_pb.ProbeBox(center=vec3(center, "center"),
                                               half_extents=vec3(half_extents, "half_extents")))
    return _set_read_at(request, at_version)


def character_move(position: Vector, displacement: Vector, *, radius: float = 0.4,
                   half_height: float = 0.9, client_id: int = 0) -> query_pb.CharacterMove:
    return query_pb.CharacterMove(
        client_id=integer(client_id, "client_id"), radius=number(radius, "radius"),
        half_height=number(half_height, "half_height"), position=vec3(position, "position"),
        displacement=vec3(displacement, "displacement"))


def move_characters_request(moves: Iterable[query_pb.CharacterMove], *,
                            at_version: Optional[int] = None) -> query_pb.MoveCharactersRequest:
    moves = list(moves)
    for i, move in enumerate(moves):
        if not isinstance(move, query_pb.CharacterMove):
            raise TypeError(f"moves[{i}]: expected a CharacterMove (character_move()), "
                            f"got {_describe(move)}")
    return _set_read_at(query_pb.MoveCharactersRequest(moves=moves), at_version)


def find_path_request(start: Vector, goal: Vector, *, profile: str = "",
                      material_costs: Optional[dict] = None, max_distance: float = 0.0,
                      at_version: Optional[int] = None,
                      **agent: object) -> query_pb.FindPathRequest:
    """A FindPath from `start` to `goal` (the agent's feet) for the server's agent profile
    `profile` (empty: its default). `agent` keywords change the profile's fields for this call
    (radius, height, max_climb, max_slope_degrees, jump_height: numbers; can_jump, can_swim:
    bools); `material_costs` maps a material number to its cost per unit (default 1);
    `max_distance` 0 is the server's --max_path_distance."""
    if not isinstance(profile, str):
        raise TypeError(f"profile: expected a str, got {_describe(profile)}")
    request = query_pb.FindPathRequest(start=vec3(start, "start"), goal=vec3(goal, "goal"),
                                       profile=profile,
                                       max_distance=number(max_distance, "max_distance"))
    for name, value in agent.items():
        if name in ("can_jump", "can_swim"):
            if not isinstance(value, bool):
                raise TypeError(f"{name}: expected a bool, got {_describe(value)}")
            setattr(request.agent, name, value)
        elif name in ("radius", "height", "max_climb", "max_slope_degrees", "jump_height"):
            setattr(request.agent, name, number(value, name))
        else:
            raise TypeError(f"find_path: unknown agent field {name!r}")
    for material, cost in (material_costs or {}).items():
        request.material_costs.add(material=integer(material, "material_costs"),
                                   cost=number(cost, f"material_costs[{material}]"))
    return _set_read_at(request, at_version)


def validate_hit_request(origin: Vector, direction: Vector, *,
                         claimed_hit: Optional[Vector] = None,
                         target_point: Optional[Vector] = None, tolerance: float = 0.0,
                         at_version: Optional[int] = None,
                         blocky: bool = False,
                         target_body: Optional[body_pb.BodyClaim] = None
                         ) -> query_pb.ValidateHitRequest:
    """A client's shot to judge (lag compensation): it claims to have hit the terrain at
    `claimed_hit`, to have reached `target_point` unobstructed, or to have hit a body part
    (`target_body`, a body_claim()), as of version `at_version`."""
    if sum(x is not None for x in (claimed_hit, target_point, target_body)) != 1:
        raise ValueError("validate_hit: give exactly one of claimed_hit, target_point and "
                         "target_body")
    request = query_pb.ValidateHitRequest(
        origin=vec3(origin, "origin"), direction=vec3(direction, "direction"),
        tolerance=number(tolerance, "tolerance"), mode=_raycast_mode(blocky))
    if claimed_hit is not None:
        request.claimed_hit.CopyFrom(vec3(claimed_hit, "claimed_hit"))
    elif target_point is not None:
        request.target_point.CopyFrom(vec3(target_point, "target_point"))
    else:
        if not isinstance(target_body, body_pb.BodyClaim):
            raise TypeError(f"target_body: expected a BodyClaim (body_claim()), got "
                            f"{_describe(target_body)}")
        request.target_body.CopyFrom(target_body)
    return _set_read_at(request, at_version)


def body_claim(body_id: int, part_id: int, tick: int, *, layer_mask: int = 0,
               ignore_ids: Iterable[int] = ()) -> body_pb.BodyClaim:
    """A shot's claim to have hit part `part_id` of body `body_id` as the shooter saw it at game
    tick `tick` (ValidateHit rewinds the bodies to it); `ignore_ids`: the shooter."""
    return body_pb.BodyClaim(body_id=integer(body_id, "body_id"), part_id=integer(part_id, "part_id"),
                             tick=integer(tick, "tick"), layer_mask=integer(layer_mask, "layer_mask"),
                             ignore_ids=[integer(i, f"ignore_ids[{n}]")
                                         for n, i in enumerate(ignore_ids)])


def query(request: Query, client_id: int = 0) -> query_pb.QueryRequest:
    """Wraps a typed request as one query of a batch (a QueryRequest is returned as it is)."""
    if isinstance(request, query_pb.QueryRequest):
        return request
    field = QUERY_FIELDS.get(type(request))
    if field is None:
        raise TypeError(f"not a query request (RaycastRequest, SweepRequest, OverlapRequest, "
                        f"ContactsRequest, ProbeRequest, MoveCharactersRequest, FindPathRequest or QueryRequest): "
                        f"{_describe(request)}")
    wrapped = query_pb.QueryRequest(client_id=client_id)
    getattr(wrapped, field).CopyFrom(request)
    return wrapped


# ---- edits --------------------------------------------------------------------------------------

def fill_ball(center: Vector, radius: float, material: int = 0) -> edit_pb.EditPrimitive:
    """A ball primitive for apply_edits; material 0 (air) carves."""
    return edit_pb.EditPrimitive(fill_ball=edit_pb.FillBallRequest(
        center=vec3(center, "center"), radius=number(radius, "radius"),
        material=integer(material, "material")))


def fill_block(center: Vector, size: Vector, material: int) -> edit_pb.EditPrimitive:
    return edit_pb.EditPrimitive(fill_block=edit_pb.FillBlock(
        center=vec3(center, "center"), size=vec3(size, "size"),
        material=integer(material, "material")))


def edits_request(primitives: Iterable[edit_pb.EditPrimitive], *,
                  idempotency_key: str = "",
                  expected_version: Optional[int] = None) -> edit_pb.ApplyEditsRequest:
    primitives = list(primitives)
    for i, primitive in enumerate(primitives):
        if not isinstance(primitive, edit_pb.EditPrimitive):
            raise TypeError(f"primitives[{i}]: expected an EditPrimitive (fill_ball(), "
                            f"fill_block(), ...), got {_describe(primitive)}")
    if not isinstance(idempotency_key, str):
        raise TypeError(f"idempotency_key: expected a str, got {_describe(idempotency_key)}")
    request = edit_pb.ApplyEditsRequest(primitives=primitives, idempotency_key=idempotency_key)
    if expected_version is not None:
        request.expected_version = integer(expected_version, "expected_version")
    return request


# ---- worlds -------------------------------------------------------------------------------------

def create_world_request(world: str, *, template_world: Optional[str] = None,
                         size_voxels: Optional[Voxel] = None, voxel_size: float = 0.0,
                         seed: int = 0) -> world_pb.CreateWorldRequest:
    """A new world `world`: a copy of `template_world`, or generated from settings (unset ones are
    the server's --world_size, --voxel_size and --seed)."""
    if not isinstance(world, str):
        raise TypeError(f"world: expected a str, got {_describe(world)}")
    request = world_pb.CreateWorldRequest(world=world)
    if template_world is not None:
        if size_voxels is not None or voxel_size or seed:
            raise ValueError("create_world: a copy of template_world takes no generator settings")
        if not isinstance(template_world, str):
            raise TypeError(f"template_world: expected a str, got {_describe(template_world)}")
        request.template_world = template_world
    else:
        settings = world_pb.WorldSettings(voxel_size=number(voxel_size, "voxel_size"),
                                          seed=integer(seed, "seed"))
        if size_voxels is not None:
            settings.size_voxels.CopyFrom(int3(size_voxels, "size_voxels"))
        request.settings.CopyFrom(settings)
    return request
