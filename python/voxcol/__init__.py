"""Python client for the voxcol voxel collision and query service (docs/sdk.md).

    import voxcol
    with voxcol.connect("127.0.0.1:50051", world="arena") as client:
        hit = client.raycast((0, 90, 0), (0, -1, 0), 200).first

The generated messages and stubs are in voxcol.v1 (e.g. voxcol.v1.query_service_pb2).
"""

from voxcol.batcher import QueryBatcher
from voxcol.channel import ChannelSecurity, make_channel, read_pem
from voxcol.client import Client, EditStream, PathWatch, QueryStream, Subscription, connect
from voxcol.errors import (AlreadyExistsError, BatchError, CancelledError, ClientClosedError,
                           DeadlineExceededError, FailedPreconditionError, InvalidArgumentError,
                           NotFoundError, OutOfRangeError, PermissionDeniedError,
                           ResourceExhaustedError, UnauthenticatedError, UnavailableError,
                           VoxcolError)
from voxcol.messages import (body, body_claim, body_filter, body_part, box, capsule, character_move, contacts_request,
                             create_world_request, edits_request, fill_ball, fill_block, find_path_request, hull,
                             int3, move_characters_request, overlap_request, posed,
                             probe_request, query, raycast_arrays, raycast_request, read_at,
                             sphere, sweep_request, update_bodies_request, validate_hit_request, vec3,
                             voxel_box)

__all__ = [
    # connecting
    "connect", "Client", "ChannelSecurity", "make_channel", "read_pem",
    # streams and batching
    "QueryBatcher", "QueryStream", "Subscription", "EditStream", "PathWatch",
    # errors
    "VoxcolError", "BatchError", "ClientClosedError", "InvalidArgumentError", "NotFoundError",
    "AlreadyExistsError", "FailedPreconditionError", "OutOfRangeError", "ResourceExhaustedError",
    "DeadlineExceededError", "UnavailableError", "UnauthenticatedError", "PermissionDeniedError",
    "CancelledError",
    # message builders
    "body", "body_claim", "body_filter", "body_part", "box", "capsule", "character_move", "contacts_request", "create_world_request",
    "edits_request", "fill_ball", "fill_block", "find_path_request", "hull", "int3", "move_characters_request",
    "overlap_request", "posed", "probe_request", "query", "raycast_arrays", "raycast_request",
    "read_at", "sphere", "sweep_request", "update_bodies_request", "validate_hit_request", "vec3", "voxel_box",
]
__version__ = "0.2.0"
