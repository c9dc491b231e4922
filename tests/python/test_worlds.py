"""World selection, the world RPCs, read-your-writes floors and ValidateHit, against the real
server. Oracles: ReadVoxels (the voxels under a carve), the CLI's answer (the C++ SDK), the
geometry of the shot (claim distances), and each world's own earlier answers."""

import math
import unittest

import voxcol
from voxcol.v1 import query_service_pb2 as query_pb
from voxcol_testing import ServerTestCase


class WorldTest(ServerTestCase):
    def test_create_copy_select_and_delete_a_world(self):
        x, z = self.column(12, -7)
        before = self.client.raycast((x, self.top, z), (0, -1, 0), self.height)
        self.assertTrue(before.hit)
        summary = self.client.create_world("arena", template_world="default")
        self.assertEqual(summary.world, "arena")
        self.assertEqual(summary.template_world, "default")
        listed = {w.world: w for w in self.client.list_worlds().worlds}
        self.assertIn("arena", listed)
        self.assertEqual(listed["arena"].template_world, "default")

        # Carve in the copy only (per-call world), then read both worlds.
        ground = before.first.position
        ack = self.client.fill_ball((ground.x, ground.y, ground.z), 3, world="arena")
        self.assertEqual(self.voxel(ground.x, ground.y, ground.z, world="arena")[1], 0)
        self.assertGreater(self.voxel(ground.x, ground.y, ground.z, world="default")[1], 0)
        self.assertEqual(self.client.read_floor("arena"), ack.version)

        in_arena = self.client.raycast((x, self.top, z), (0, -1, 0), self.height, world="arena")
        in_default = self.client.raycast((x, self.top, z), (0, -1, 0), self.height)
        self.assertEqual(in_default.first.position.y, ground.y)
        self.assertLess(in_arena.first.position.y, ground.y - 2)
        self.assertAlmostEqual(in_arena.first.position.y,
                               self.surface_from_voxels(x, z, world="arena"),
                               delta=0.1 * self.info.voxel_size)

        # A client connected to the world uses it for every call; the CLI agrees.
        with self.connect(world="arena") as arena:
            self.assertEqual(arena.world, "arena")
            same = arena.raycast((x, self.top, z), (0, -1, 0), self.height)
            self.assertEqual(same.first.position.y, in_arena.first.position.y)
            self.assertEqual(arena.world_info().version, ack.version)
            self.assertEqual(arena.raycast((x, self.top, z), (0, -1, 0), self.height,
                                           world="default").first.position.y, ground.y)
        cli = self.cli_json("raycast", "--world=arena", f"--origin={x},{self.top},{z}",
                            "--direction=0,-1,0", f"--max_distance={self.height}")
        self.assertAlmostEqual(cli["first"]["position"]["y"], in_arena.first.position.y, places=3)

        self.client.delete_world("arena")
        self.assertNotIn("arena", [w.world for w in self.client.list_worlds().worlds])
        with self.assertRaises(voxcol.NotFoundError) as caught:
            self.client.world_info(world="arena")
        self.assertIn("arena", caught.exception.details())

    def test_generated_world_from_settings(self):
        self.client.create_world("small", size_voxels=(64, 32, 64), seed=11)
        info = self.client.world_info(world="small")
        self.assertEqual(info.voxel_bounds.max.x - info.voxel_bounds.min.x, 64)
        self.assertEqual(info.voxel_bounds.max.y - info.voxel_bounds.min.y, 32)
        self.assertEqual(info.seed, 11)
        self.assertEqual(info.version, 0)
        with self.assertRaises(voxcol.AlreadyExistsError):
            self.client.create_world("small", size_voxels=(64, 32, 64))
        self.client.delete_world("small")

    def test_world_errors(self):
        with self.assertRaises(voxcol.FailedPreconditionError):
            self.client.delete_world("default")
        with self.assertRaises(voxcol.InvalidArgumentError) as caught:
            self.client.create_world("Bad Name!")
        self.assertIn("world", caught.exception.details())
        with self.assertRaises(voxcol.NotFoundError):
            self.client.create_world("copy", template_world="no-such-world")
        with self.assertRaises(voxcol.NotFoundError):
            self.client.raycast((0.5, 10, 0.5), world="no-such-world")
        with self.assertRaises(ValueError):  # a request naming one world, the call another
            self.client.raycast(query_pb.RaycastRequest(world="a"), world="b")

    def test_batcher_waits_for_the_floor_of_its_world(self):
        self.client.create_world("floors", template_world="default")
        x, z = self.column(-17, 21)
        ground = self.client.raycast((x, self.top, z), (0, -1, 0), self.height,
                                     world="floors").first.position
        ack = self.client.apply_edits([voxcol.fill_ball((ground.x, ground.y, ground.z), 3)],
                                      world="floors")
        self.assertEqual(self.client.read_floor("floors"), ack.version)
        self.assertLess(self.client.read_floor("default"), ack.version + 1)
        with self.client.batcher(world="floors") as batcher:
            future = batcher.raycast((x, self.top, z), (0, -1, 0), self.height)
            batcher.flush()
            answer = future.result(timeout=30)
        self.assertGreaterEqual(answer.version, ack.version)
        self.assertLess(answer.first.position.y, ground.y - 2)
        self.client.raise_floor(ack.version + 5, "floors")
        self.assertEqual(self.client.read_floor("floors"), ack.version + 5)
        self.client.delete_world("floors")


class ValidateHitTest(ServerTestCase):
    def shot(self, dx, dz):
        x, z = self.column(dx, dz)
        origin = (x + 0.3, self.top, z - 0.2)
        direction = (0.2, -1.0, 0.1)
        ground = self.client.raycast(origin, direction, self.height * 2)
        self.assertTrue(ground.hit)
        return origin, direction, ground

    def test_verdicts_against_the_geometry_of_the_shot(self):
        origin, direction, ground = self.shot(8, 8)
        hit = ground.first.position
        point = (hit.x, hit.y, hit.z)
        confirmed = self.client.validate_hit(origin, direction, claimed_hit=point,
                                             tolerance=0.05)
        self.assertEqual(confirmed.verdict, query_pb.HIT_VERDICT_CONFIRMED)
        self.assertAlmostEqual(confirmed.claim_distance, math.dist(origin, point), places=3)
        self.assertTrue(confirmed.server_hit)

        # A claimed hit 4 units short of the ground along the shot: nothing there to hit.
        norm = math.sqrt(sum(c * c for c in direction))
        unit = [c / norm for c in direction]
        short = [p - 4 * u for p, u in zip(point, unit)]
        empty = self.client.validate_hit(origin, direction, claimed_hit=short, tolerance=0.05)
        self.assertEqual(empty.verdict, query_pb.HIT_VERDICT_NO_TERRAIN_AT_CLAIM)
        self.assertAlmostEqual(empty.claim_distance, math.dist(origin, short), places=3)

        # A target 3 units beyond the ground: the terrain blocks the shot 3 units before it.
        beyond = [p + 3 * u for p, u in zip(point, unit)]
        blocked = self.client.validate_hit(origin, direction, target_point=beyond,
                                           tolerance=0.05)
        self.assertEqual(blocked.verdict, query_pb.HIT_VERDICT_BLOCKED_BY_TERRAIN)
        self.assertAlmostEqual(blocked.discrepancy, 3.0, delta=0.01)
        free = self.client.validate_hit(origin, direction, target_point=short, tolerance=0.05)
        self.assertEqual(free.verdict, query_pb.HIT_VERDICT_CONFIRMED)

    def test_lag_compensation_reads_the_version_the_shooter_saw(self):
        origin, direction, ground = self.shot(-9, 14)
        hit = ground.first.position
        seen = ground.version
        ack = self.client.fill_ball((hit.x, hit.y, hit.z), 3)
        self.assertEqual(self.voxel(hit.x, hit.y, hit.z)[1], 0)  # carved: air there now
        claim = (hit.x, hit.y, hit.z)
        then = self.client.validate_hit(origin, direction, claimed_hit=claim, tolerance=0.05,
                                        at_version=seen)
        self.assertEqual(then.verdict, query_pb.HIT_VERDICT_CONFIRMED)
        self.assertEqual(then.version, seen)
        now = self.client.validate_hit(origin, direction, claimed_hit=claim, tolerance=0.05)
        self.assertEqual(now.verdict, query_pb.HIT_VERDICT_NO_TERRAIN_AT_CLAIM)
        self.assertEqual(now.version, ack.version)

    def test_bad_claims(self):
        with self.assertRaises(ValueError):
            self.client.validate_hit((0, 10, 0), (0, -1, 0))  # neither claim nor target
        with self.assertRaises(voxcol.InvalidArgumentError) as caught:
            self.client.validate_hit((0.5, self.top, 0.5), (0, -1, 0), claimed_hit=(0.5, 0, 0.5),
                                     tolerance=-1)
        self.assertIn("tolerance", caught.exception.details())


if __name__ == "__main__":
    unittest.main()
