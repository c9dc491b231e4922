"""WatchPaths through the Python client against the real server (issue 41, path watching): a
straight path over a rock floor is watched; a wall across it is heard as BLOCKED at the wall's
version (the watch_path generator ends there), a hole dug through a wall the path goes around is
heard as SHORTER, unwatching is answered, and a bad watch raises InvalidArgumentError naming the
field."""

import threading
import unittest

import voxcol
from voxcol.v1 import edit_service_pb2 as edit_pb
from voxcol.v1 import query_service_pb2 as query_pb
from voxcol.v1 import types_pb2 as types_pb
from voxcol_testing import ServerTestCase

START, GOAL = (-12.5, -8.0, -8.5), (12.5, -8.0, -8.5)


def region(lo, hi, material):
    return edit_pb.EditPrimitive(fill_region=edit_pb.FillRegion(
        region=voxcol.voxel_box(lo, hi), material=material, mode=types_pb.EDIT_MODE_SET))


def wall(solid, z0=-16, z1=8):
    """Voxels x in [-1, 1), z in [z0, z1), 3 high on the floor: across the path, gap z >= 8."""
    return region((-1, -8, z0), (1, -5, z1), 2 if solid else 0)


class WatchPathsTest(ServerTestCase):
    SERVER_FLAGS = ["--store_sync=false", "--nav_profiles=small:radius=0.3,height=1.5",
                    "--nav_default_profile=small"]

    def setUp(self):
        # Air over a rock floor (surface at y = -8) in the central 32 x 32 square, no wall.
        self.client.apply_edits([region((-16, -8, -16), (16, 12, 16), 0),
                                 region((-16, -12, -16), (16, -8, 16), 2)])

    def test_wall_across_the_path_is_heard_as_blocked_at_its_version(self):
        events = self.client.watch_path(START, GOAL)
        registered = next(events)
        self.assertEqual(registered.event, query_pb.PATH_WATCH_EVENT_REGISTERED)
        self.assertEqual(registered.path.status, query_pb.PATH_STATUS_OK)
        self.assertAlmostEqual(registered.watched_length, 25.0, delta=0.1)
        acked = {}
        # The generator blocks in next(): edit from another thread once it waits.
        timer = threading.Timer(0.3, lambda: acked.setdefault(
            "version", self.client.apply_edits([wall(True)]).version))
        timer.start()
        blocked = next(events)
        timer.join()
        self.assertEqual(blocked.event, query_pb.PATH_WATCH_EVENT_BLOCKED)
        self.assertEqual(blocked.version, acked["version"])
        self.assertEqual(blocked.blocked_waypoint, 1)
        self.assertLess(blocked.stopped_at.x, -1.0)
        self.assertEqual(blocked.path.status, query_pb.PATH_STATUS_OK)  # through the gap
        self.assertGreater(blocked.path.length, 30.0)
        with self.assertRaises(StopIteration):  # a blocked watch ends
            next(events)

    def test_hole_through_the_wall_offers_a_shorter_path_and_unwatch_is_answered(self):
        self.client.apply_edits([wall(True)])
        around = self.client.find_path(START, GOAL)
        self.assertEqual(around.status, query_pb.PATH_STATUS_OK)
        with self.client.watch_paths() as stream:
            stream.watch(7, START, GOAL, path=around, shorter_margin=2)
            events = iter(stream)
            self.assertEqual(next(events).event, query_pb.PATH_WATCH_EVENT_REGISTERED)
            dug = self.client.apply_edits([wall(False, -12, -4)]).version
            shorter = next(events)
            self.assertEqual(shorter.event, query_pb.PATH_WATCH_EVENT_SHORTER)
            self.assertEqual(shorter.watch_id, 7)
            self.assertEqual(shorter.version, dug)
            self.assertLess(shorter.path.length, around.length - 2)
            stream.unwatch(7)
            self.assertEqual(next(events).event, query_pb.PATH_WATCH_EVENT_UNWATCHED)

    def test_a_bad_watch_raises_naming_the_field(self):
        events = self.client.watch_path(START, GOAL, shorter_margin=-1)
        with self.assertRaises(voxcol.InvalidArgumentError) as raised:
            next(events)
        self.assertIn("watch.shorter_margin", str(raised.exception))


if __name__ == "__main__":
    unittest.main()
