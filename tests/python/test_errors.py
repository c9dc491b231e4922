"""Bad use gets a clear error: wrong types, a closed client, an unreachable server, deadlines,
and the typed errors of the server's answers."""

import socket
import time
import unittest

import grpc

import voxcol
from voxcol.v1 import query_service_pb2 as query_pb
from voxcol_testing import ServerTestCase


def unused_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


class WrongTypesTest(unittest.TestCase):
    """Checked before anything is sent: no server needed."""

    def setUp(self):
        self.client = voxcol.connect(f"127.0.0.1:{unused_port()}")

    def tearDown(self):
        self.client.close()

    def assertTypeErrorNaming(self, name, call, *args, **kwargs):
        with self.assertRaises(TypeError) as caught:
            call(*args, **kwargs)
        self.assertIn(name, str(caught.exception))

    def test_wrong_types_name_the_argument(self):
        self.assertTypeErrorNaming("origin", self.client.raycast, "0,90,0")
        self.assertTypeErrorNaming("origin", self.client.raycast, (0, 90))
        self.assertTypeErrorNaming("max_distance", self.client.raycast, (0, 90, 0), (0, -1, 0),
                                   "far")
        self.assertTypeErrorNaming("origin[1]", self.client.raycast, (0, None, 0))
        self.assertTypeErrorNaming("shape", self.client.sweep, 0.5, (0, 0, 0), (0, -1, 0), 1)
        self.assertTypeErrorNaming("material", self.client.fill_ball, (0, 0, 0), 1, "stone")
        self.assertTypeErrorNaming("materials", self.client.write_voxels, (0, 0, 0), (1, 1, 1),
                                   "x", b"x")
        self.assertTypeErrorNaming("world", self.client.raycast, (0, 0, 0), world=3)
        self.assertTypeErrorNaming("RaycastRequest", self.client.raycast,
                                   query_pb.SweepRequest())
        self.assertTypeErrorNaming("primitives[0]", self.client.apply_edits, ["carve"])
        self.assertTypeErrorNaming("not both", self.client.raycast, query_pb.RaycastRequest(),
                                   (0, -1, 0))
        self.assertTypeErrorNaming("target", voxcol.connect, 50051)
        with self.assertRaises(ValueError):
            self.client.raycast((0, 0, 0), timeout=-1)
        batcher = self.client.batcher()
        self.assertTypeErrorNaming("not a query request", batcher.add, "ray")
        self.assertTypeErrorNaming("ApplyEditsRequest", batcher.flush_tick, [])
        self.assertEqual(batcher.queued, 0)


class UnreachableTest(unittest.TestCase):
    def test_unreachable_server(self):
        address = f"127.0.0.1:{unused_port()}"
        with voxcol.connect(address, timeout=5) as client:
            started = time.monotonic()
            with self.assertRaises(voxcol.UnavailableError) as caught:
                client.world_info()
            self.assertLess(time.monotonic() - started, 5)
            self.assertEqual(caught.exception.code(), grpc.StatusCode.UNAVAILABLE)
            self.assertIn(address, str(caught.exception))
            self.assertEqual(caught.exception.method, "WorldService.GetWorldInfo")
            with self.assertRaises(voxcol.UnavailableError):
                client.wait_ready(timeout=0.3)
            batcher = client.batcher()
            future = batcher.raycast((0.5, 10, 0.5))
            batcher.flush()
            self.assertIsInstance(future.exception(timeout=10), voxcol.UnavailableError)


class ServerErrorsTest(ServerTestCase):
    def test_closed_client(self):
        client = self.connect()
        self.assertTrue(client.world_info().voxel_size > 0)
        client.close()
        self.assertTrue(client.closed)
        for call in (client.world_info, lambda: client.raycast((0.5, 10, 0.5)),
                     client.query_stream, lambda: client.subscribe()):
            with self.assertRaises(voxcol.ClientClosedError) as caught:
                call()
            self.assertEqual(caught.exception.code(), grpc.StatusCode.CANCELLED)
            self.assertIn("closed", caught.exception.details())

    def test_deadlines(self):
        with self.assertRaises(voxcol.DeadlineExceededError):
            self.client.contacts(voxcol.sphere(40.0), (0.5, 0.5, 0.5), timeout=0.001)
        with self.client.subscribe(timeout=0.3) as feed:  # no edits come: the deadline ends it
            started = time.monotonic()
            with self.assertRaises(voxcol.DeadlineExceededError):
                next(feed)
            self.assertLess(time.monotonic() - started, 10)

    def test_server_errors_are_typed(self):
        with self.assertRaises(voxcol.InvalidArgumentError) as caught:
            self.client.raycast((0.5, self.top, 0.5), (0, -1, 0), -1)
        error = caught.exception
        self.assertIsInstance(error, grpc.RpcError)
        self.assertEqual(error.status_code, grpc.StatusCode.INVALID_ARGUMENT)
        self.assertIn("max_distance", error.message)
        self.assertEqual(error.method, "QueryService.Raycast")
        with self.assertRaises(voxcol.OutOfRangeError):
            self.client.raycast((0.5, self.top, 0.5), at_version=10**6)
        edits = [voxcol.fill_ball((0.5, 0.5, 0.5), 1)]
        with self.assertRaises(voxcol.FailedPreconditionError):
            self.client.apply_edits(edits, expected_version=10**6)


if __name__ == "__main__":
    unittest.main()
