"""The Python client's conformance runner (tests/conformance/README.md).

    python3 -m voxcol.conformance --target HOST:PORT --scenario FILE --out FILE
                                  [--secure_target HOST:PORT --ca CA_PEM_FILE --token TOKEN]
    python3 -m voxcol.conformance --target HOST:PORT --throughput_seconds N

Runs one scenario file through the voxcol client library (its connect(), its methods, its
QueryBatcher for Query steps) and writes one JSON line per step; or measures rays per second
through the QueryBatcher. Exit status 0 when every step ran, whatever the server answered.
"""

from __future__ import annotations

import argparse
import collections
import json
import random
import sys
import time
from typing import Any, Callable, Dict, List, Optional, Tuple, Type

import grpc
from google.protobuf import json_format
from google.protobuf.message import Message

import voxcol
from voxcol.errors import BatchError, VoxcolError
from voxcol.v1 import admin_service_pb2 as admin_pb
from voxcol.v1 import body_service_pb2 as body_pb
from voxcol.v1 import edit_service_pb2 as edit_pb
from voxcol.v1 import query_service_pb2 as query_pb
from voxcol.v1 import replica_service_pb2 as replica_pb
from voxcol.v1 import world_service_pb2 as world_pb

# What a step answered: its final status and every response message, in the order received.
Outcome = Tuple[grpc.StatusCode, str, List[Message]]


class RunnerError(Exception):
    """The runner itself failed (a bad scenario file or flags): exit status 2."""


def _parse(json_value: Any, message_type: Type[Message], where: str) -> Message:
    message = message_type()
    try:
        json_format.ParseDict(json_value if json_value is not None else {}, message)
    except json_format.ParseError as e:
        raise RunnerError(f"{where}: not a {message_type.__name__}: {e}") from None
    return message


def _failed(error: VoxcolError, responses: Optional[List[Message]] = None) -> Outcome:
    return error.code(), error.details(), responses or []


def _unary(call: Callable[[Any], Message], request_type: Type[Message]
           ) -> Callable[[voxcol.Client, Dict[str, Any], str], Outcome]:
    def run(client: voxcol.Client, step: Dict[str, Any], where: str) -> Outcome:
        request = _parse(step.get("request"), request_type, where)
        try:
            response = call(client, request)  # type: ignore[call-arg]
        except VoxcolError as e:
            return _failed(e)
        return grpc.StatusCode.OK, "", [response]
    return run


def _subscribe(client: voxcol.Client, step: Dict[str, Any], where: str) -> Outcome:
    request = _parse(step.get("request"), edit_pb.SubscribeRequest, where)
    take = int(step.get("take", 0))
    responses: List[Message] = []
    feed = client.subscribe(request)
    try:
        while len(responses) < take:
            responses.append(next(feed))
    except VoxcolError as e:
        return _failed(e, responses)
    except StopIteration:
        return (grpc.StatusCode.UNKNOWN, "the feed ended before `take` responses", responses)
    finally:
        feed.cancel()
    return grpc.StatusCode.OK, "", responses


def _edit_stream(client: voxcol.Client, step: Dict[str, Any], where: str) -> Outcome:
    requests = [_parse(r, edit_pb.EditStreamRequest, f"{where}.requests[{i}]")
                for i, r in enumerate(step.get("requests", []))]
    responses: List[Message] = []
    try:
        for response in client.edit_stream(requests):  # type: ignore[arg-type]
            responses.append(response)
    except VoxcolError as e:
        return _failed(e, responses)
    return grpc.StatusCode.OK, "", responses


def _watch_paths(client: voxcol.Client, step: Dict[str, Any], where: str) -> Outcome:
    """Every request on one WatchPaths stream, half-close, every event until the stream ends."""
    requests = [_parse(r, query_pb.WatchPathsRequest, f"{where}.requests[{i}]")
                for i, r in enumerate(step.get("requests", []))]
    responses: List[Message] = []
    stream = client.watch_paths()
    for request in requests:
        stream.send(request)
    stream.done_writing()
    try:
        for response in stream:
            responses.append(response)
    except VoxcolError as e:
        return _failed(e, responses)
    return grpc.StatusCode.OK, "", responses


def _query(client: voxcol.Client, step: Dict[str, Any], where: str) -> Outcome:
    """Every batch through the client's QueryBatcher, as given (send()); the responses in the
    order they arrived; the stream's status once every batch is answered."""
    requests = [_parse(r, query_pb.QueryBatchRequest, f"{where}.requests[{i}]")
                for i, r in enumerate(step.get("requests", []))]
    arrived: List[Message] = []
    batcher = client.batcher()

    def record(future: "voxcol.batcher.Future[Any]") -> None:
        error = future.exception()
        if error is None:
            arrived.append(future.result())
        elif isinstance(error, BatchError) and error.response is not None:
            arrived.append(error.response)  # a batch-level code: still the batch's response

    for request in requests:
        batcher.send(request).add_done_callback(record)  # type: ignore[arg-type]
    error = batcher.close()
    if error is not None:
        return _failed(error, arrived)
    return grpc.StatusCode.OK, "", arrived


Step = Callable[[voxcol.Client, Dict[str, Any], str], Outcome]
STEPS: Dict[str, Step] = {
    "WorldService.GetWorldInfo": _unary(voxcol.Client.world_info, world_pb.GetWorldInfoRequest),
    "WorldService.CreateWorld": _unary(voxcol.Client.create_world, world_pb.CreateWorldRequest),
    "WorldService.DeleteWorld": _unary(voxcol.Client.delete_world, world_pb.DeleteWorldRequest),
    "WorldService.ListWorlds": _unary(voxcol.Client.list_worlds, world_pb.ListWorldsRequest),
    "QueryService.Raycast": _unary(voxcol.Client.raycast, query_pb.RaycastRequest),
    "QueryService.Sweep": _unary(voxcol.Client.sweep, query_pb.SweepRequest),
    "QueryService.Overlap": _unary(voxcol.Client.overlap, query_pb.OverlapRequest),
    "QueryService.Contacts": _unary(voxcol.Client.contacts, query_pb.ContactsRequest),
    "QueryService.Probe": _unary(voxcol.Client.probe, query_pb.ProbeRequest),
    "QueryService.MoveCharacters": _unary(voxcol.Client.move_characters,
                                          query_pb.MoveCharactersRequest),
    "QueryService.ValidateHit": _unary(voxcol.Client.validate_hit, query_pb.ValidateHitRequest),
    "QueryService.FindPath": _unary(voxcol.Client.find_path, query_pb.FindPathRequest),
    "QueryService.GetNavMesh": _unary(voxcol.Client.get_nav_mesh, query_pb.GetNavMeshRequest),
    "QueryService.WatchPaths": _watch_paths,
    "BodyService.UpdateBodies": _unary(voxcol.Client.update_bodies, body_pb.UpdateBodiesRequest),
    "BodyService.ListBodies": _unary(voxcol.Client.list_bodies, body_pb.ListBodiesRequest),
    "QueryService.Query": _query,
    "EditService.FillBall": _unary(voxcol.Client.fill_ball, edit_pb.FillBallRequest),
    "EditService.ApplyEdits": _unary(voxcol.Client.apply_edits, edit_pb.ApplyEditsRequest),
    "EditService.ReadVoxels": _unary(voxcol.Client.read_voxels, edit_pb.ReadVoxelsRequest),
    "EditService.WriteVoxels": _unary(voxcol.Client.write_voxels, edit_pb.WriteVoxelsRequest),
    "EditService.Subscribe": _subscribe,
    "EditService.EditStream": _edit_stream,
    "AdminService.CreateCheckpoint": _unary(voxcol.Client.create_checkpoint,
                                            admin_pb.CreateCheckpointRequest),
    "AdminService.ExportRegion": _unary(voxcol.Client.export_region,
                                        admin_pb.ExportRegionRequest),
    "AdminService.ImportRegion": _unary(voxcol.Client.import_region,
                                        admin_pb.ImportRegionRequest),
    "ReplicaService.GetReplicaStatus": _unary(voxcol.Client.replica_status,
                                              replica_pb.GetReplicaStatusRequest),
}


def _to_json(message: Message) -> Dict[str, Any]:
    return json_format.MessageToDict(message, preserving_proto_field_name=False)


def run_scenario(args: argparse.Namespace) -> int:
    try:
        with open(args.scenario, encoding="utf-8") as f:
            scenario = json.load(f)
    except (OSError, ValueError) as e:
        raise RunnerError(f"cannot read the scenario {args.scenario}: {e}") from None
    name = scenario.get("name")
    steps = scenario.get("steps")
    if not isinstance(name, str) or not isinstance(steps, list):
        raise RunnerError(f"{args.scenario}: needs a \"name\" and a list of \"steps\"")
    if scenario.get("secure", False):
        if not (args.secure_target and args.ca and args.token):
            raise RunnerError(f"{name} is secure: it needs --secure_target, --ca and --token")
        client = voxcol.connect(args.secure_target, tls=True, ca_pem=voxcol.read_pem(args.ca),
                                token=args.token)
    else:
        client = voxcol.connect(args.target)
    with client, open(args.out, "w", encoding="utf-8") as out:
        for index, step in enumerate(steps):
            call = step.get("call") if isinstance(step, dict) else None
            run = STEPS.get(call)  # type: ignore[arg-type]
            if run is None:
                raise RunnerError(f"{name} step {index}: unknown call {call!r}")
            code, message, responses = run(client, step, f"{name} step {index}")
            line = {"scenario": name, "step": index, "call": call, "code": code.value[0],
                    "message": message, "responses": [_to_json(r) for r in responses]}
            out.write(json.dumps(line) + "\n")
    return 0


def run_throughput(args: argparse.Namespace) -> int:
    """Rays per second through the QueryBatcher, the same loop as every client's runner: each
    round queues 256 raycasts (straight down from y 40, max_distance 90, x and z uniform in
    [-60, 60) from a fixed seed) and flushes, at most 4 rounds in flight; counted for N seconds
    after one second of warm-up."""
    rng = random.Random(7)
    with voxcol.connect(args.target) as client:
        batcher = client.batcher()
        in_flight: "collections.deque[List[Any]]" = collections.deque()
        start = time.monotonic()
        counting = start + 1.0
        end = counting + args.throughput_seconds
        rays = 0

        def finish_oldest() -> None:
            nonlocal rays
            for answer in in_flight.popleft():
                answer.result()  # raises VoxcolError for a failed ray
                if time.monotonic() >= counting:
                    rays += 1

        while time.monotonic() < end:
            round_ = []
            for _ in range(256):
                ray = query_pb.RaycastRequest(max_distance=90)
                origin = ray.origin
                origin.x = rng.uniform(-60.0, 60.0)
                origin.y = 40
                origin.z = rng.uniform(-60.0, 60.0)
                ray.direction.y = -1
                round_.append(batcher.raycast(ray))
            batcher.flush()
            in_flight.append(round_)
            if len(in_flight) >= 4:
                finish_oldest()
        while in_flight:
            finish_oldest()
        counted = time.monotonic() - counting
        batcher.close()
    print(f"rays_per_second={rays / counted:.0f}")
    return 0


def main(argv: Optional[List[str]] = None) -> int:
    parser = argparse.ArgumentParser(prog="python3 -m voxcol.conformance", description=__doc__,
                                     formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--target", required=True, help="HOST:PORT of the plaintext server")
    parser.add_argument("--scenario", help="the scenario file (JSON)")
    parser.add_argument("--out", help="where to write the JSON lines")
    parser.add_argument("--secure_target", help="HOST:PORT of the TLS server")
    parser.add_argument("--ca", help="PEM file of the CA that signed the TLS server's certificate")
    parser.add_argument("--token", help="bearer token for the TLS server")
    parser.add_argument("--throughput_seconds", type=float, default=0.0,
                        help="measure rays per second for this long instead")
    args = parser.parse_args(argv)
    try:
        if args.throughput_seconds > 0:
            return run_throughput(args)
        if not args.scenario or not args.out:
            parser.error("--scenario and --out are required (or --throughput_seconds)")
        return run_scenario(args)
    except (RunnerError, VoxcolError, OSError) as e:
        print(f"voxcol.conformance: {e}", file=sys.stderr)
        return 2


if __name__ == "__main__":
    sys.exit(main())
