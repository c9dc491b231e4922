"""FindPath through the Python client against the real server (issue 41): a room built by edits
with a wall across it and one gap; the path goes through the gap (every leg checked against the
wall), a batched path answers as the unary one, closing the gap makes NO_PATH at the edit's
version while at_version still answers the old path, bad fields raise InvalidArgumentError naming
them."""

import math
import unittest

import voxcol
from voxcol.v1 import edit_service_pb2 as edit_pb
from voxcol.v1 import query_service_pb2 as query_pb
from voxcol.v1 import types_pb2 as types_pb
from voxcol_testing import ServerTestCase

START, GOAL = (-10.5, -8.0, 0.5), (10.5, -8.0, 0.5)


def region(lo, hi, material):
    return edit_pb.EditPrimitive(fill_region=edit_pb.FillRegion(
        region=voxcol.voxel_box(lo, hi), material=material, mode=types_pb.EDIT_MODE_SET))


def in_wall(x, z, gap_open):
    """The wall: voxels x in [-2, 2), z in [-16, 10) (and [10, 16) once the gap is closed)."""
    return -2 <= x < 2 and -16 <= z < (10 if gap_open else 16)


class FindPathTest(ServerTestCase):
    SERVER_FLAGS = ["--store_sync=false", "--nav_profiles=small:radius=0.3,height=1.5"]

    @classmethod
    def setUpClass(cls):
        super().setUpClass()
        # Air over a rock floor (surface at y = -8) in the central 32 x 32 square, and a wall
        # 3 voxels high across it with a gap at z 10..16.
        cls.client.apply_edits([region((-16, -8, -16), (16, 12, 16), 0),
                                region((-16, -12, -16), (16, -8, 16), 2),
                                region((-2, -8, -16), (2, -5, 10), 2)])

    def assert_around_wall(self, path, gap_open=True):
        self.assertEqual(path.status, query_pb.PATH_STATUS_OK)
        points = [(w.position.x, w.position.z) for w in path.waypoints]
        self.assertGreaterEqual(len(points), 3)  # it must turn at the gap
        for (ax, az), (bx, bz) in zip(points, points[1:]):
            steps = max(1, math.ceil(math.hypot(bx - ax, bz - az) / 0.05))
            for s in range(steps + 1):
                t = s / steps
                self.assertFalse(in_wall(ax + t * (bx - ax), az + t * (bz - az), gap_open),
                                 f"a leg from {(ax, az)} to {(bx, bz)} crosses the wall")

    def test_path_goes_through_the_gap_and_batches_agree(self):
        path = self.client.find_path(START, GOAL)
        self.assert_around_wall(path)
        self.assertGreater(path.length, 21 + 10)  # the straight line is 21
        self.assertTrue(all(w.action == query_pb.WAYPOINT_ACTION_WALK for w in path.waypoints))
        with self.client.batcher() as batcher:
            future = batcher.find_path(START, GOAL)
            batcher.flush()
            batched = future.result(timeout=30)
        self.assertEqual(batched.version, path.version)
        self.assertEqual([(w.position.x, w.position.y, w.position.z) for w in batched.waypoints],
                         [(w.position.x, w.position.y, w.position.z) for w in path.waypoints])
        # A named profile and inline agent fields and costs.
        small = self.client.find_path(START, GOAL, profile="small", can_jump=True,
                                      material_costs={2: 1.5}, max_distance=200)
        self.assert_around_wall(small)
        too_far = self.client.find_path(START, GOAL, max_distance=10)
        self.assertEqual(too_far.status, query_pb.PATH_STATUS_TOO_FAR)

    def test_bad_fields_raise_invalid_argument_naming_them(self):
        cases = [({"profile": "nope"}, "profile"), ({"radius": -1.0}, "agent.radius"),
                 ({"material_costs": {2: -1.0}}, "material_costs[0].cost"),
                 ({"max_distance": -5.0}, "max_distance")]
        for options, field in cases:
            with self.subTest(field=field):
                with self.assertRaises(voxcol.InvalidArgumentError) as caught:
                    self.client.find_path(START, GOAL, **options)
                self.assertIn(field, str(caught.exception))
        with self.assertRaises(voxcol.InvalidArgumentError) as caught:
            self.client.find_path((math.nan, 0, 0), GOAL)
        self.assertIn("start", str(caught.exception))
        with self.assertRaises(TypeError):
            voxcol.find_path_request(START, GOAL, wings=2)

    def test_closing_the_gap_answers_no_path_and_at_version_keeps_the_old_path(self):
        before = self.client.find_path(START, GOAL)
        self.assert_around_wall(before)
        ack = self.client.apply_edits([region((-2, -8, 10), (2, -5, 16), 2)])
        after = self.client.find_path(START, GOAL)
        self.assertGreaterEqual(after.version, ack.version)
        self.assertEqual(after.status, query_pb.PATH_STATUS_NO_PATH)
        old = self.client.find_path(START, GOAL, at_version=before.version)
        self.assertEqual(old.version, before.version)
        self.assertAlmostEqual(old.length, before.length, places=3)
        # Open it again for the other tests of the class.
        self.client.apply_edits([region((-2, -8, 10), (2, -5, 16), 0)])


if __name__ == "__main__":
    unittest.main()
