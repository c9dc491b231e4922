"""The Python client (python/voxcol) against the real server: every RPC kind, answers checked.

Run by run_python_tests.sh (ctest PythonClient), which pip-installs the package into a venv and
sets VOXCOL_SERVER and VOXCOL_CLI to the built binaries. Oracles: the voxels of a column
(ReadVoxels) for the raycast, the CLI's answer to the same ray, the sphere's geometry for the
sweep, the exact overlap for the conservative probe.
"""

import contextlib
import io
import json
import math
import os
import pathlib
import re
import subprocess
import tempfile
import threading
import time
import unittest

import ctypes
import signal

import grpc

import voxcol
from voxcol.v1 import query_service_pb2 as query_pb


def _die_with_this_process():
    """In the server's child process: SIGKILL it when the test process dies (PR_SET_PDEATHSIG),
    so that no server outlives its test, also when CTest kills the test on a timeout."""
    ctypes.CDLL(None, use_errno=True).prctl(1, signal.SIGKILL)  # 1 = PR_SET_PDEATHSIG


class ServerTest(unittest.TestCase):
    @classmethod
    def setUpClass(cls):
        cls.tmp = tempfile.TemporaryDirectory(prefix="voxcol-py-test-")
        port_file = os.path.join(cls.tmp.name, "port")
        cls.log = open(os.path.join(cls.tmp.name, "server.log"), "w")
        cls.server = subprocess.Popen(
            [os.environ["VOXCOL_SERVER"], "--listen=127.0.0.1:0", f"--port_file={port_file}",
             "--metrics_listen=127.0.0.1:0", f"--data_dir={cls.tmp.name}/data",
             f"--backup_root={cls.tmp.name}/backups", "--world_size=128,96,128"],
            stderr=cls.log, preexec_fn=_die_with_this_process)
        deadline = time.monotonic() + 60
        port = ""
        while not port:
            if cls.server.poll() is not None or time.monotonic() > deadline:
                raise RuntimeError("voxcol_server did not start")
            time.sleep(0.05)
            if os.path.exists(port_file):
                with open(port_file) as f:
                    port = f.read().strip()
        cls.address = f"127.0.0.1:{port}"
        cls.client = voxcol.connect(cls.address)
        cls.info = cls.client.world_info()
        b = cls.info.bounds
        cls.top = b.max.y - 0.5
        cls.height = b.max.y - b.min.y - 1

    @classmethod
    def tearDownClass(cls):
        cls.client.close()
        cls.server.terminate()
        cls.server.wait(timeout=30)
        cls.log.close()
        cls.tmp.cleanup()

    def column(self, dx, dz):
        """The centre line (x, z) of the voxel column (dx, dz) from the world's middle column."""
        b, size = self.info.bounds, self.info.voxel_size
        vx = math.floor(0.5 * (b.min.x + b.max.x) / size) + dx
        vz = math.floor(0.5 * (b.min.z + b.max.z) / size) + dz
        return (vx + 0.5) * size, (vz + 0.5) * size

    def ground(self, dx, dz):
        """The smooth surface under column (dx, dz): its raycast hit."""
        x, z = self.column(dx, dz)
        response = self.client.raycast((x, self.top, z), (0, -1, 0), self.height)
        self.assertTrue(response.hit)
        return response.first.position

    def surface_from_voxels(self, x, z):
        """Where the smooth surface crosses the centre line of a voxel column, from its voxels.

        The mesher's field is the solid occupancy at voxel centres (water and air count 0),
        iso-level 127.5, linear along the line: scanning down, the first crossing lies between the
        first centre >= 128 and the one above it. Linear interpolation is off by up to 0.09 voxel
        where an end is saturated (the mesher then uses the slope, docs/design.md): compare within
        0.1 voxel.
        """
        size = self.info.voxel_size
        vx, vz = math.floor(x / size), math.floor(z / size)
        lo, hi = self.info.voxel_bounds.min.y, self.info.voxel_bounds.max.y
        voxels = self.client.read_voxels((vx, lo, vz), (vx + 1, hi, vz + 1)).voxels
        self.assertEqual(len(voxels.occupancies), hi - lo)

        def solid(y):
            if y >= hi or voxels.materials[y - lo] < 2:
                return 0
            return voxels.occupancies[y - lo]

        y = next(y for y in range(hi - 1, lo - 1, -1) if solid(y) >= 128)
        return (y + 0.5 + (solid(y) - 127.5) / (solid(y) - solid(y + 1))) * size


class QueryTest(ServerTest):
    def test_world_info(self):
        info = self.info
        self.assertGreater(info.voxel_size, 0)
        self.assertEqual(info.voxel_bounds.max.y - info.voxel_bounds.min.y, 96)
        self.assertAlmostEqual(info.bounds.max.y - info.bounds.min.y, 96 * info.voxel_size)

    def test_raycast_down_meets_the_voxels_surface_and_agrees_with_cli(self):
        x, z = self.column(0, 0)
        response = self.client.raycast((x, self.top, z), (0, -1, 0), self.height)
        self.assertTrue(response.hit)
        hit = response.first.position
        self.assertAlmostEqual(hit.x, x, places=4)
        self.assertAlmostEqual(response.first.distance, self.top - hit.y, places=3)
        self.assertAlmostEqual(hit.y, self.surface_from_voxels(x, z),
                               delta=0.1 * self.info.voxel_size)
        self.assertGreater(response.first.normal.y, 0)
        cli = subprocess.run(
            [os.environ["VOXCOL_CLI"], "raycast", f"--server={self.address}",
             f"--origin={x},{self.top},{z}", "--direction=0,-1,0",
             f"--max_distance={self.height}", "--json"],
            capture_output=True, text=True, check=True)
        answer = json.loads(cli.stdout)
        self.assertAlmostEqual(answer["first"]["position"]["y"], hit.y, places=3)

    def test_sweep_sphere_rests_on_the_ground(self):
        x, z = self.column(-20, 10)
        start = (x, self.top - 1, z)
        response = self.client.sweep(voxcol.sphere(0.5), start, (0, -1, 0), self.height - 2)
        self.assertTrue(response.hit)
        first = response.first
        centre = first.shape_position
        self.assertAlmostEqual(centre.y, start[1] - first.distance, places=3)
        contact_gap = math.dist((centre.x, centre.y, centre.z),
                                (first.position.x, first.position.y, first.position.z))
        self.assertAlmostEqual(contact_gap, 0.5, delta=0.01)
        self.assertGreater(first.normal.y, 0)
        # The sphere stops no lower than where the ray straight down meets the ground.
        self.assertGreaterEqual(centre.y + 1e-3, self.ground(-20, 10).y)

    def test_overlap_and_probe(self):
        hit = self.ground(10, -10)
        buried = self.client.overlap(voxcol.box((0.5, 0.5, 0.5)), (hit.x, hit.y - 0.2, hit.z),
                                     penetration=True)
        self.assertTrue(buried.touches_solid)
        self.assertGreater(buried.penetration.depth, 0)
        free = self.client.overlap(voxcol.sphere(0.5), (hit.x, hit.y + 1.5, hit.z))
        self.assertFalse(free.touches_solid)
        # The probe is conservative: wherever the exact overlap touches, the probe may touch.
        for dy in (-0.2, 0.3, 1.5, 4.0):
            centre = (hit.x, hit.y + dy, hit.z)
            exact = self.client.overlap(voxcol.box((0.5, 0.5, 0.5)), centre).touches_solid
            probe = self.client.probe(centre, half_extents=(0.5, 0.5, 0.5), include_voxels=True)
            if exact:
                self.assertTrue(probe.may_touch_solid, dy)
                self.assertTrue(any(v.solid for v in probe.voxels), dy)
        sphere_probe = self.client.probe((hit.x, hit.y, hit.z), radius=1.0)
        self.assertTrue(sphere_probe.may_touch_solid)
        with self.assertRaises(ValueError):
            self.client.probe((0, 0, 0))

    def test_contacts_of_a_sunk_sphere(self):
        hit = self.ground(5, 5)
        response = self.client.contacts(voxcol.sphere(1.0), (hit.x, hit.y + 0.5, hit.z),
                                        skip_water=True)
        points = [p for chunk in response.chunks for p in chunk.points]
        self.assertTrue(points)
        deepest = max(points, key=lambda p: p.depth)
        self.assertGreater(deepest.depth, 0.1)
        self.assertLessEqual(deepest.depth, 1.0 + 1e-3)
        self.assertGreater(deepest.normal.y, 0)
        for chunk in response.chunks:
            self.assertLessEqual(len(chunk.points), 4)

    def test_move_characters_lands_on_the_ground(self):
        hit = self.ground(-10, -20)
        start = (hit.x, hit.y + 3, hit.z)
        response = self.client.move_characters(
            [voxcol.character_move(start, (0, -4, 0), client_id=7)])
        self.assertEqual(len(response.results), 1)
        result = response.results[0]
        self.assertEqual(result.client_id, 7)
        feet = result.position.y - 0.9 - 0.4
        self.assertLess(result.position.y, start[1])
        self.assertGreater(feet, hit.y - 0.3)
        self.assertNotEqual(result.ground, query_pb.GROUND_STATE_AIRBORNE)

    def test_bad_request_names_the_field(self):
        with self.assertRaises(grpc.RpcError) as caught:
            self.client.raycast((0, self.top, 0), (0, -1, 0), -1)
        self.assertEqual(caught.exception.code(), grpc.StatusCode.INVALID_ARGUMENT)
        self.assertIn("max_distance", caught.exception.details())


class BatchTest(ServerTest):
    def test_query_batch_of_every_kind(self):
        x, z = self.column(15, 15)
        unary = self.client.raycast((x, self.top, z), (0, -1, 0), self.height)
        hit = unary.first.position
        centre = (hit.x, hit.y + 0.5, hit.z)
        queries = [
            voxcol.raycast_request((x, self.top, z), (0, -1, 0), self.height),
            voxcol.sweep_request(voxcol.sphere(0.5), (x, self.top - 1, z), (0, -1, 0),
                                 self.height - 2),
            voxcol.overlap_request(voxcol.sphere(1.0), centre),
            voxcol.contacts_request(voxcol.sphere(1.0), centre),
            voxcol.probe_request(centre, radius=1.0),
            query_pb.MoveCharactersRequest(moves=[voxcol.character_move(
                (hit.x, hit.y + 3, hit.z), (0, -4, 0))]),
            voxcol.raycast_request((x, self.top, z), (0, 0, 0), 10),  # bad: zero direction
        ]
        batch = self.client.query_batch(queries, min_version=unary.version, timeout_ms=5000)
        self.assertEqual(batch.code, 0, batch.message)
        self.assertEqual(len(batch.results), len(queries))
        kinds = [r.WhichOneof("result") for r in batch.results[:6]]
        self.assertEqual(kinds, ["raycast", "sweep", "overlap", "contacts", "probe",
                                 "move_characters"])
        for i, result in enumerate(batch.results[:6]):
            self.assertEqual(result.code, 0, result.message)
            self.assertEqual(result.client_id, i)
        self.assertEqual(batch.results[0].raycast.first.position.y, hit.y)
        self.assertTrue(batch.results[1].sweep.hit)
        self.assertTrue(batch.results[2].overlap.touches_solid)
        self.assertTrue(batch.results[3].contacts.chunks)
        self.assertTrue(batch.results[4].probe.may_touch_solid)
        self.assertEqual(batch.results[6].code, grpc.StatusCode.INVALID_ARGUMENT.value[0])
        self.assertIn("direction", batch.results[6].message)

    def test_packed_raycasts_equal_the_single_raycasts(self):
        columns = [self.column(5 + 3 * i, 7 + 2 * i) for i in range(6)]
        origins = [(x, self.top, z) for x, z in columns] + [(10_000.0, 0.0, 0.0)]
        directions = [(0, -1, 0)] * len(origins)
        batch = self.client.query_batch(
            raycasts=voxcol.raycast_arrays(origins, directions, self.height))
        self.assertEqual(batch.code, 0, batch.message)
        packed = batch.raycasts
        self.assertEqual(len(packed.codes), len(origins))
        for i, origin in enumerate(origins[:-1]):
            single = self.client.raycast(origin, (0, -1, 0), self.height)
            self.assertEqual(packed.codes[i], 0)
            self.assertEqual(bool(packed.flags[i] & query_pb.RAYCAST_FLAG_HIT), single.hit)
            self.assertEqual(packed.distances[i], single.first.distance)
            self.assertEqual(packed.positions[3 * i + 1], single.first.position.y)
        # The last origin is outside the world: that ray alone fails, naming its element.
        self.assertEqual(packed.codes[-1], grpc.StatusCode.INVALID_ARGUMENT.value[0])
        self.assertTrue(packed.message.startswith("raycasts.origins[6]:"), packed.message)

    def test_stream_of_batches_and_a_tick(self):
        x, z = self.column(-30, 20)
        ray = voxcol.raycast_request((x, self.top, z), (0, -1, 0), self.height)
        with self.client.query_stream() as stream:
            futures = [stream.submit([ray]) for _ in range(5)]
            answers = [f.result(timeout=30) for f in futures]
            self.assertEqual(sorted(a.batch_id for a in answers), [1, 2, 3, 4, 5])
            before = answers[0].results[0].raycast.first.position
            self.assertTrue(all(a.results[0].raycast.first.position.y == before.y
                                for a in answers if a.version == answers[0].version))
            carve = voxcol.edits_request([voxcol.fill_ball((before.x, before.y, before.z), 3)])
            tick = stream.submit([ray], edits=carve).result(timeout=30)
        self.assertEqual(tick.code, 0, tick.message)
        self.assertGreater(tick.edit_ack.version, answers[0].version)
        self.assertEqual(tick.version, tick.edit_ack.version)
        after = tick.results[0].raycast
        self.assertTrue(not after.hit or after.first.position.y < before.y - 2)


class EditTest(ServerTest):
    def sky_box(self, dx):
        """A 2x2x2 voxel box near the world's top corner."""
        vb = self.info.voxel_bounds
        lo = (vb.min.x + dx, vb.max.y - 6, vb.min.z + 2)
        return lo, (lo[0] + 2, lo[1] + 2, lo[2] + 2)

    def test_fill_ball_carves_and_changes_the_raycast(self):
        before = self.ground(30, -30)
        ack = self.client.fill_ball((before.x, before.y, before.z), 3)
        self.assertGreater(ack.version, 0)
        self.assertGreater(ack.changed_chunks, 0)
        x, z = self.column(30, -30)
        after = self.client.raycast((x, self.top, z), (0, -1, 0), self.height)
        self.assertGreaterEqual(after.version, ack.version)
        self.assertTrue(not after.hit or after.first.position.y < before.y - 2)

    def test_apply_edits_block_idempotency_and_precondition(self):
        before = self.ground(-30, -30)
        block_top = before.y + 4
        edits = [voxcol.fill_block((before.x, block_top - 2, before.z), (4, 4, 4), 2)]
        ack = self.client.apply_edits(edits, idempotency_key="py-block-1")
        self.assertFalse(ack.replayed)
        replay = self.client.apply_edits(edits, idempotency_key="py-block-1")
        self.assertTrue(replay.replayed)
        self.assertEqual(replay.version, ack.version)
        after = self.ground(-30, -30)
        self.assertAlmostEqual(after.y, block_top, delta=0.6)
        with self.assertRaises(grpc.RpcError) as caught:
            self.client.apply_edits(edits, expected_version=ack.version + 100)
        self.assertEqual(caught.exception.code(), grpc.StatusCode.FAILED_PRECONDITION)

    def test_edit_stream_acks_in_order(self):
        hit = self.ground(40, 0)
        batches = [voxcol.edits_request([voxcol.fill_ball((hit.x, hit.y, hit.z), r)])
                   for r in (1.0, 2.0)]
        responses = list(self.client.edit_stream(batches))
        self.assertEqual([r.batch_id for r in responses], [1, 2])
        self.assertTrue(all(r.WhichOneof("result") == "ack" for r in responses))
        self.assertLess(responses[0].ack.version, responses[1].ack.version)

    def test_read_write_voxels_round_trip(self):
        lo, hi = self.sky_box(2)
        count = 2 * 2 * 2
        ack = self.client.write_voxels(lo, hi, bytes([3] * count), bytes([255] * count))
        read = self.client.read_voxels(lo, hi)
        self.assertGreaterEqual(read.version, ack.version)
        self.assertEqual(read.voxels.materials, bytes([3] * count))
        self.assertEqual(read.voxels.occupancies, bytes([255] * count))

    def test_export_import_region_and_checkpoint(self):
        lo, hi = self.sky_box(6)
        self.client.write_voxels(lo, hi, bytes([5] * 8), bytes([200] * 8))
        exported = self.client.export_region(lo, hi)
        self.client.write_voxels(lo, hi, bytes(8), bytes(8))
        ack = self.client.import_region(exported.region)
        self.assertGreater(ack.version, exported.version)
        self.assertEqual(self.client.read_voxels(lo, hi).voxels.materials, bytes([5] * 8))
        checkpoint = self.client.create_checkpoint("py-checkpoint")
        self.assertTrue(os.path.isdir(checkpoint.dir))
        self.assertGreaterEqual(checkpoint.version, ack.version)

    def test_subscribe_receives_the_edit(self):
        hit = self.ground(-40, 0)
        start = self.client.world_info().version
        received = []
        with self.client.subscribe(from_version=start) as feed:
            def read():
                for response in feed:
                    received.append(response)
                    return
            reader = threading.Thread(target=read)
            reader.start()
            ack = self.client.fill_ball((hit.x, hit.y, hit.z), 2)
            reader.join(timeout=30)
        self.assertEqual(len(received), 1)
        self.assertEqual(received[0].version, ack.version)
        self.assertEqual(len(received[0].changes), ack.changed_chunks)


class DocExampleTest(ServerTest):
    def test_the_python_example_of_docs_sdk_md_runs(self):
        doc = pathlib.Path(__file__).resolve().parents[2] / "docs" / "sdk.md"
        blocks = re.findall(r"^```python\n(.*?)^```$", doc.read_text(), re.M | re.S)
        self.assertEqual(len(blocks), 1)
        code = blocks[0].replace("127.0.0.1:50051", self.address)
        out = io.StringIO()
        with contextlib.redirect_stdout(out):
            exec(compile(code, str(doc), "exec"), {})
        lines = out.getvalue().splitlines()
        self.assertEqual(len(lines), 3, lines)
        ground = float(re.match(r"ground at y (\S+), version 0$", lines[0]).group(1))
        after = re.match(r"after the carve at version 1: ground at y (\S+)$", lines[1])
        self.assertLess(float(after.group(1)), ground - 2)
        self.assertRegex(lines[2], r"^the feed saw version 1, [1-9]\d* chunks$")


if __name__ == "__main__":
    unittest.main()
