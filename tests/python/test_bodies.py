"""Bodies through the Python client against the real server (issue 42): update_bodies with the
message builders, a raycast with a body filter hitting a capsule at its tick and missing it ten
ticks later, ValidateHit on a body part, list_bodies, and bad fields raising InvalidArgumentError
naming them."""

import unittest

import voxcol
from voxcol.v1 import body_service_pb2 as body_pb
from voxcol.v1 import query_service_pb2 as query_pb
from voxcol_testing import ServerTestCase


class BodiesTest(ServerTestCase):
    SERVER_FLAGS = ["--store_sync=false", "--nav=false"]

    @classmethod
    def setUpClass(cls):
        super().setUpClass()
        # High in the sky of the world (nothing there): a capsule at tick 100, walking +x 0.5 per
        # tick until tick 110.
        cls.y = cls.top - 4
        capsule = voxcol.body(7, (0, cls.y, 0), [voxcol.body_part(1, voxcol.capsule(0.9, 0.4))],
                              owner=42)
        cls.client.update_bodies(100, create=[capsule])
        for t in range(101, 111):
            cls.client.update_bodies(t, move={7: (0.5 * (t - 100), cls.y, 0)})

    def ray(self, tick, x=0.0):
        return self.client.raycast(voxcol.raycast_request(
            (x, self.y, -20), (0, 0, 1), 40, bodies=voxcol.body_filter(tick)))

    def test_ray_hits_the_capsule_at_its_tick_and_misses_it_ten_ticks_later(self):
        then = self.ray(100)
        self.assertTrue(then.hit)
        self.assertEqual(then.first_kind, body_pb.HIT_KIND_BODY)
        self.assertEqual((then.body.body_id, then.body.part_id, then.body.owner), (7, 1, 42))
        self.assertAlmostEqual(then.first.distance, 19.6, places=3)
        self.assertFalse(self.ray(110).hit)
        self.assertEqual(self.ray(None, x=5.0).body.tick, 110)

    def test_validate_hit_rewinds_the_bodies_to_the_claims_tick(self):
        def judge(tick):
            return self.client.validate_hit(voxcol.validate_hit_request(
                (-30, self.y, 0), (1, 0, 0), target_body=voxcol.body_claim(7, 1, tick)))
        self.assertEqual(judge(100).verdict, query_pb.HIT_VERDICT_CONFIRMED)
        self.assertEqual(judge(110).verdict, query_pb.HIT_VERDICT_CONFIRMED)  # at x = 5, still on it
        self.assertEqual(judge(100).body.body_id, 7)

    def test_overlap_lists_the_body_parts(self):
        near = self.client.overlap(voxcol.overlap_request(
            voxcol.sphere(0.5), (5.85, self.y, 0), bodies=voxcol.body_filter(scope="bodies")))
        self.assertEqual([(b.body_id, b.part_id) for b in near.bodies], [(7, 1)])
        far = self.client.overlap(voxcol.overlap_request(
            voxcol.sphere(0.5), (5.95, self.y, 0), bodies=voxcol.body_filter(scope="bodies")))
        self.assertEqual(len(far.bodies), 0)

    def test_list_bodies(self):
        listed = self.client.list_bodies()
        self.assertTrue(listed.has_ticks)
        self.assertEqual(listed.latest_tick, 110)
        self.assertEqual([b.id for b in listed.bodies], [7])
        self.assertAlmostEqual(listed.bodies[0].position.x, 5.0, places=4)

    def test_bad_fields_are_named(self):
        bad = voxcol.body(8, (0, self.y, 0), [voxcol.body_part(1, voxcol.capsule(0.5, 0))])
        with self.assertRaises(voxcol.InvalidArgumentError) as e:
            self.client.update_bodies(111, create=[bad])
        self.assertIn("create[0].parts[0].shape.capsule.radius", str(e.exception))
        with self.assertRaises(voxcol.OutOfRangeError) as e:
            self.ray(10)
        self.assertIn("body_filter.tick", str(e.exception))
        with self.assertRaises(ValueError):
            voxcol.body_filter(scope="everything")


if __name__ == "__main__":
    unittest.main()
