"""Python client for the voxcol voxel collision and query service (docs/sdk.md).

    import voxcol
    with voxcol.connect("127.0.0.1:50051") as client:
        hit = client.raycast((0, 90, 0), (0, -1, 0), 200).first

The generated messages and stubs are in voxcol.v1 (e.g. voxcol.v1.query_service_pb2).
"""

from voxcol.client import (Client, QueryStream, Subscription, box, capsule, character_move,
                           connect, contacts_request, edits_request, fill_ball, fill_block, hull,
                           int3, overlap_request, posed, probe_request, query, raycast_arrays,
                           raycast_request,
                           sphere, sweep_request, vec3, voxel_box)

__all__ = [
    "Client", "QueryStream", "Subscription", "box", "capsule", "character_move", "connect",
    "contacts_request", "edits_request", "fill_ball", "fill_block", "hull", "int3",
    "overlap_request", "posed", "probe_request", "query", "raycast_arrays", "raycast_request",
    "sphere",
    "sweep_request", "vec3", "voxel_box",
]
__version__ = "0.1.0"
