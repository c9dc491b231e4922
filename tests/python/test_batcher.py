"""The QueryBatcher (voxcol.batcher) against the real server: futures per query, flush per tick,
ticks with edits, packed raycasts, read_at, reconnect with backoff, cancel. Oracles: the
voxels under each ray (ReadVoxels), the CLI's answer, ReadVoxels after a tick's carve."""

import concurrent.futures
import time
import unittest

import grpc

import voxcol
from voxcol.v1 import query_service_pb2 as query_pb
from voxcol_testing import ServerTestCase


class BatcherTest(ServerTestCase):
    def test_futures_per_query_match_the_voxels_and_the_cli(self):
        columns = [self.column(3 * i - 20, 11 - 2 * i) for i in range(12)]
        with self.client.batcher(max_batch_queries=5) as batcher:  # 12 queries: 3 batches
            futures = [batcher.raycast((x, self.top, z), (0, -1, 0), self.height)
                       for x, z in columns]
            bad = batcher.raycast(query_pb.RaycastRequest(
                origin=voxcol.vec3((0.5, self.top, 0.5)), max_distance=10))  # zero direction
            self.assertEqual(batcher.queued, 13)
            self.assertEqual(batcher.flush(), 13)
            self.assertEqual(batcher.queued, 0)
            answers = [f.result(timeout=30) for f in futures]
            with self.assertRaises(voxcol.InvalidArgumentError) as caught:
                bad.result(timeout=30)
        self.assertIn("direction", caught.exception.details())
        self.assertIsInstance(bad.exception(), voxcol.InvalidArgumentError)
        for (x, z), answer in zip(columns, answers):
            self.assertIsInstance(answer, query_pb.RaycastResponse)
            self.assertTrue(answer.hit)
            self.assertAlmostEqual(answer.first.position.y, self.surface_from_voxels(x, z),
                                   delta=0.1 * self.info.voxel_size)
        x, z = columns[4]
        cli = self.cli_json("raycast", f"--origin={x},{self.top},{z}", "--direction=0,-1,0",
                            f"--max_distance={self.height}")
        self.assertAlmostEqual(cli["first"]["position"]["y"], answers[4].first.position.y,
                               places=3)

    def test_every_query_kind_and_done_callbacks(self):
        x, z = self.column(9, -13)
        ground = self.client.raycast((x, self.top, z), (0, -1, 0), self.height).first.position
        centre = (ground.x, ground.y + 0.5, ground.z)
        done = []
        with self.client.batcher() as batcher:
            futures = [
                batcher.sweep(voxcol.sphere(0.5), (x, self.top - 1, z), (0, -1, 0),
                              self.height - 2),
                batcher.overlap(voxcol.sphere(1.0), centre),
                batcher.contacts(voxcol.sphere(1.0), centre),
                batcher.probe(centre, radius=1.0),
                batcher.move_characters([voxcol.character_move(
                    (ground.x, ground.y + 3, ground.z), (0, -4, 0))]),
                batcher.add(voxcol.raycast_request((x, self.top, z), (0, -1, 0), self.height)),
            ]
            for f in futures:
                f.add_done_callback(done.append)
            batcher.flush()
            sweep, overlap, contacts, probe, moves, ray = [f.result(timeout=30) for f in futures]
        self.assertTrue(sweep.hit)
        self.assertGreaterEqual(sweep.first.shape_position.y + 1e-3, ground.y)
        self.assertTrue(overlap.touches_solid)
        self.assertTrue(contacts.chunks)
        self.assertTrue(probe.may_touch_solid)
        self.assertEqual(len(moves.results), 1)
        self.assertEqual(ray.first.position.y, ground.y)
        self.assertEqual(len(done), len(futures))

    def test_a_tick_applies_its_edits_before_its_queries(self):
        x, z = self.column(-25, -18)
        ground = self.client.raycast((x, self.top, z), (0, -1, 0), self.height).first.position
        with self.client.batcher() as batcher:
            after = batcher.raycast((x, self.top, z), (0, -1, 0), self.height)
            tick = batcher.flush_tick(voxcol.edits_request(
                [voxcol.fill_ball((ground.x, ground.y, ground.z), 3)],
                idempotency_key="py-tick-1"))
            response = tick.result(timeout=30)
            answer = after.result(timeout=30)
        self.assertTrue(response.HasField("edit_ack"))
        self.assertEqual(response.version, response.edit_ack.version)
        self.assertEqual(answer.version, response.edit_ack.version)
        self.assertEqual(self.client.read_floor(), response.edit_ack.version)
        self.assertEqual(self.voxel(ground.x, ground.y, ground.z)[1], 0)  # carved
        self.assertLess(answer.first.position.y, ground.y - 2)
        self.assertAlmostEqual(answer.first.position.y, self.surface_from_voxels(x, z),
                               delta=0.1 * self.info.voxel_size)

        # The tick's version is still readable as of before it (read_at).
        with self.client.batcher() as batcher:
            old = batcher.raycast((x, self.top, z), (0, -1, 0), self.height)
            batcher.flush(read_at=voxcol.read_at(response.edit_ack.version - 1))
            self.assertEqual(old.result(timeout=30).first.position.y, ground.y)

    def test_a_failed_tick_carries_the_batch_code(self):
        with self.client.batcher() as batcher:
            queued = batcher.raycast((0.5, self.top, 0.5), (0, -1, 0), self.height)
            tick = batcher.flush_tick(voxcol.edits_request(
                [voxcol.fill_ball((0.5, 1e6, 0.5), 3)]))  # outside the world
            with self.assertRaises(voxcol.BatchError) as caught:
                tick.result(timeout=30)
            self.assertEqual(caught.exception.code(), grpc.StatusCode.INVALID_ARGUMENT)
            self.assertIn("edits.primitives[0]", caught.exception.details())
            self.assertIsNotNone(caught.exception.response)
            self.assertIsInstance(queued.exception(timeout=30), voxcol.BatchError)

    def test_packed_raycasts_equal_the_single_raycasts(self):
        columns = [self.column(2 * i - 5, 3 * i - 9) for i in range(7)]
        origins = [(x, self.top, z) for x, z in columns]
        with self.client.batcher() as batcher:
            packed = batcher.raycasts(voxcol.raycast_arrays(
                origins, [(0, -1, 0)] * len(origins), self.height)).result(timeout=30).raycasts
        self.assertEqual(list(packed.codes), [0] * len(origins))
        for i, (x, z) in enumerate(columns):
            self.assertTrue(packed.flags[i] & query_pb.RAYCAST_FLAG_HIT)
            self.assertAlmostEqual(packed.positions[3 * i + 1], self.surface_from_voxels(x, z),
                                   delta=0.1 * self.info.voxel_size)
            single = self.client.raycast(origins[i], (0, -1, 0), self.height)
            self.assertEqual(packed.distances[i], single.first.distance)

    def test_min_version_not_reached_fails_the_batch(self):
        with self.client.batcher(batch_timeout=0.3) as batcher:
            future = batcher.raycast((0.5, self.top, 0.5), (0, -1, 0), self.height)
            start = time.monotonic()
            batcher.flush(min_version=10**9)
            error = future.exception(timeout=30)
        self.assertIsInstance(error, voxcol.BatchError)
        self.assertIn(error.code(), (grpc.StatusCode.FAILED_PRECONDITION,
                                     grpc.StatusCode.DEADLINE_EXCEEDED))
        self.assertLess(time.monotonic() - start, 10)

    def test_unflushed_futures_time_out_and_cancel(self):
        batcher = self.client.batcher()
        future = batcher.raycast((0.5, self.top, 0.5))
        with self.assertRaises(concurrent.futures.TimeoutError):
            future.result(timeout=0.05)
        self.assertFalse(future.done())
        batcher.cancel()
        self.assertIsInstance(future.exception(timeout=5), voxcol.CancelledError)

    def test_closed_client(self):
        client = self.connect()
        batcher = client.batcher()
        client.close()
        future = batcher.raycast((0.5, self.top, 0.5))
        self.assertEqual(batcher.flush(), 0)
        self.assertIsInstance(future.exception(timeout=5), voxcol.ClientClosedError)


class ReconnectTest(ServerTestCase):
    def test_reconnects_after_a_restart_with_backoff(self):
        x, z = self.column(4, 4)
        batcher = self.client.batcher(reconnect_backoff=1.0, max_reconnect_backoff=2.0)
        first = batcher.raycast((x, self.top, z), (0, -1, 0), self.height)
        batcher.flush()
        expected = first.result(timeout=30).first.position.y

        self.server.stop()
        lost = batcher.raycast((x, self.top, z), (0, -1, 0), self.height)
        batcher.flush()
        self.assertIsInstance(lost.exception(timeout=30), voxcol.UnavailableError)
        # Within the backoff the next flush fails at once instead of blocking the tick.
        started = time.monotonic()
        waiting = batcher.raycast((x, self.top, z), (0, -1, 0), self.height)
        self.assertEqual(batcher.flush(), 0)
        error = waiting.exception(timeout=5)
        self.assertIsInstance(error, voxcol.UnavailableError)
        self.assertIn("backoff", error.details())
        self.assertLess(time.monotonic() - started, 0.5)

        self.server.start()  # the same port and data
        deadline = time.monotonic() + 30
        while True:
            again = batcher.raycast((x, self.top, z), (0, -1, 0), self.height)
            batcher.flush()
            error = again.exception(timeout=30)
            if error is None:
                break
            self.assertIsInstance(error, voxcol.UnavailableError)
            self.assertLess(time.monotonic(), deadline, "the batcher did not reconnect")
            time.sleep(0.2)
        self.assertEqual(again.result().first.position.y, expected)
        self.assertIsNone(batcher.close())


if __name__ == "__main__":
    unittest.main()
