// The QueryBatcher against a real server: answers equal to the unary calls, batches, ticks with
// edits, packed raycasts, read-your-writes floors, reconnect after a server restart, closing.
import assert from "node:assert/strict";
import { after, before, describe, test } from "node:test";

import { ClientClosedError, RaycastFlag, Status, VoxcolClient, VoxcolError, connect } from "@voxcol/client";

import { TestServer, downRay } from "./helpers";

let server: TestServer;
let client: VoxcolClient;

before(async () => {
  server = await TestServer.start();
  client = await connect(server.target);
});

after(async () => {
  client.close();
  await server.dispose();
});

describe("QueryBatcher", () => {
  test("a batch answers every kind exactly as the unary calls do", async () => {
    const ground = (await client.raycast(downRay(5.5, -7.5))).first!.position!;
    const posed = { shape: { capsule: { halfHeight: 0.5, radius: 0.4 } }, position: { ...ground, y: ground.y + 0.3 } };
    const requests = {
      raycast: downRay(5.5, -7.5),
      sweep: { shape: { ...posed, position: { ...ground, y: ground.y + 8 } }, direction: { y: -1 }, distance: 20 },
      overlap: { shape: posed, includePenetration: true },
      contacts: { shape: posed, margin: 0.1 },
      probe: { sphere: { center: ground, radius: 2 }, includeVoxels: true, maxVoxels: 16 },
      moveCharacters: { moves: [{ radius: 0.4, halfHeight: 0.5, position: { ...ground, y: ground.y + 2 }, displacement: { x: 1, y: -3 } }] },
    };
    const batcher = client.batcher();
    const answers = [
      batcher.raycast(requests.raycast),
      batcher.sweep(requests.sweep),
      batcher.overlap(requests.overlap),
      batcher.contacts(requests.contacts),
      batcher.probe(requests.probe),
      batcher.moveCharacters(requests.moveCharacters),
    ];
    assert.equal(batcher.queued, 6);
    const batches = await batcher.flush();
    assert.equal(batches.length, 1, "one tick, one batch");
    assert.equal(batches[0]!.code, Status.OK);
    assert.equal(batches[0]!.results.length, 6);
    const [raycast, sweep, overlap, contacts, probe, moves] = await Promise.all(answers);
    assert.deepEqual(raycast, await client.raycast(requests.raycast));
    assert.deepEqual(sweep, await client.sweep(requests.sweep));
    assert.deepEqual(overlap, await client.overlap(requests.overlap));
    assert.deepEqual(contacts, await client.contacts(requests.contacts));
    assert.deepEqual(probe, await client.probe(requests.probe));
    assert.deepEqual(moves, await client.moveCharacters(requests.moveCharacters));
    assert.equal(raycast!.hit, true);
    assert.equal(overlap!.touchesSolid, true);
    await batcher.close();
  });

  test("a bad query fails alone; batches split at maxBatchQueries", async () => {
    const batcher = client.batcher({ maxBatchQueries: 3 });
    const good = [0, 1, 2, 3, 4, 5].map((i) => batcher.raycast(downRay(i + 0.5, 0.5)));
    const bad = batcher.raycast({ origin: { x: 0.5, y: 40, z: 0.5 }, direction: {}, maxDistance: 90 });
    const batches = await batcher.flush();
    assert.deepEqual(batches.map((b) => b.results.length), [3, 3, 1]);
    assert.deepEqual(new Set(batches.map((b) => b.batchId)).size, 3);
    for (const [i, answer] of (await Promise.all(good)).entries()) {
      const unary = await client.raycast(downRay(i + 0.5, 0.5));
      assert.equal(answer.first!.distance, unary.first!.distance);
    }
    await assert.rejects(bad, (e: unknown) => e instanceof VoxcolError && e.code === Status.INVALID_ARGUMENT && /direction/.test(e.details));
    await batcher.close();
  });

  test("add() keeps the client id; the result carries the code", async () => {
    const batcher = client.batcher();
    const result = batcher.add({ clientId: 77n, probe: { box: { center: { x: 0, y: 0, z: 0 }, halfExtents: { x: 1, y: 1, z: 1 } } } });
    await batcher.flush();
    const answer = await result;
    assert.equal(answer.clientId, 77n);
    assert.equal(answer.code, Status.OK);
    assert.ok(answer.probe !== undefined);
    await batcher.close();
  });

  test("a tick: edits first, its queries on exactly the version they produced", async () => {
    const ray = downRay(-30.5, 20.5);
    const before = await client.raycast(ray);
    const ground = before.first!.position!;
    const batcher = client.batcher();
    const hit = batcher.raycast(ray);
    const tick = await batcher.flushTick({ primitives: [{ fillBall: { center: ground, radius: 3, material: 0 } }] });
    assert.equal(tick.code, Status.OK, tick.message);
    assert.ok(tick.editAck !== undefined);
    assert.equal(tick.editAck.version, before.version + 1n);
    assert.equal(tick.version, tick.editAck.version);
    assert.equal(client.readFloor(), tick.editAck.version, "the tick's ack raised the floor");
    const after = await hit;
    assert.equal(after.version, tick.editAck.version);
    assert.ok(after.first!.distance > before.first!.distance + 1, "the query saw the carve");
    // Independent check: the voxel the first ray hit is air now.
    const v = { x: Math.floor(ground.x), y: Math.floor(ground.y), z: Math.floor(ground.z) };
    const read = await client.readVoxels({ region: { min: v, max: { x: v.x + 1, y: v.y + 1, z: v.z + 1 } } });
    assert.equal(read.voxels!.occupancies[0], 0);

    const failed = await batcher.flushTick({ primitives: [] });
    assert.equal(failed.code, Status.INVALID_ARGUMENT);
    assert.ok(failed.error instanceof VoxcolError && /primitives/.test(failed.error.details));
    await batcher.close();
  });

  test("packed raycasts equal the unary rays", async () => {
    const xs = [-40.5, -10.25, 3.5, 17.75, 44.5];
    const origins = new Float32Array(xs.flatMap((x) => [x, 40, x / 2]));
    const directions = new Float32Array(xs.flatMap(() => [0, -1, 0]));
    const batcher = client.batcher();
    const answer = await batcher.raycasts({ origins, directions, maxDistances: [90] });
    assert.equal(answer.code, Status.OK);
    const packed = answer.raycasts!;
    assert.equal(packed.codes.length, xs.length);
    for (const [i, x] of xs.entries()) {
      const unary = await client.raycast(downRay(x, x / 2));
      assert.equal(packed.codes[i], 0);
      assert.equal((packed.flags[i]! & RaycastFlag.RAYCAST_FLAG_HIT) !== 0, unary.hit);
      assert.equal(packed.distances[i], unary.first!.distance);
      assert.deepEqual(packed.positions.slice(3 * i, 3 * i + 3), [unary.first!.position!.x, unary.first!.position!.y, unary.first!.position!.z]);
      assert.equal(packed.materials[i], unary.first!.material);
    }
    const malformed = await batcher.raycasts({ origins: [0, 40], directions: [0, -1, 0], maxDistances: [90] });
    assert.equal(malformed.code, Status.INVALID_ARGUMENT);
    await batcher.close();
  });

  test("read-your-writes: batches carry the world's floor as minVersion", async () => {
    const floored = await connect(server.target);
    try {
      const ack = await floored.fillBall({ center: { x: 40, y: 0, z: -40 }, radius: 2, material: 2 });
      assert.equal(floored.readFloor(), ack.version);
      const batcher = floored.batcher({ batchTimeoutMs: 300 });
      let answer = batcher.raycast(downRay(40.5, -40.5));
      await batcher.flush();
      assert.ok((await answer).version >= ack.version);

      // A floor the world has not reached: the server must hold the batch and refuse it, which
      // shows the floor went out as min_version.
      floored.raiseFloor(ack.version + 1000n);
      answer = batcher.raycast(downRay(40.5, -40.5));
      const [held] = await batcher.flush();
      assert.equal(held!.code, Status.FAILED_PRECONDITION, held!.message);
      await assert.rejects(answer, (e: unknown) => e instanceof VoxcolError && e.code === Status.FAILED_PRECONDITION);

      // Floors are per world: another world's floor does not touch the default world's batches.
      const other = floored.batcher({ world: "no-floor-here", batchTimeoutMs: 300 });
      const [elsewhere] = await other.flush();
      assert.equal(elsewhere, undefined, "nothing queued, nothing sent");
      const plain = floored.batcher({ readYourWrites: false });
      const free = plain.raycast(downRay(40.5, -40.5));
      await plain.flush();
      assert.equal((await free).hit, true);
      await Promise.all([batcher.close(), other.close(), plain.close()]);
    } finally {
      floored.close();
    }
  });

  test("reconnects after the server restarts", { timeout: 60_000 }, async () => {
    const own = await TestServer.start();
    const restartable = await connect(own.target, { channelOptions: { "grpc.initial_reconnect_backoff_ms": 100, "grpc.max_reconnect_backoff_ms": 500 } });
    try {
      const batcher = restartable.batcher({ reconnectBackoffMs: 50, maxReconnectBackoffMs: 200 });
      const first = batcher.raycast(downRay(0.5, 0.5));
      await batcher.flush();
      const expected = await first;

      await own.stop();
      const lost = batcher.raycast(downRay(0.5, 0.5));
      await batcher.flush();
      await assert.rejects(lost, (e: unknown) => e instanceof VoxcolError && e.code === Status.UNAVAILABLE);

      await own.restart();
      let again: typeof expected | undefined;
      const deadline = Date.now() + 30_000;
      while (again === undefined && Date.now() < deadline) {
        const attempt = batcher.raycast(downRay(0.5, 0.5));
        await batcher.flush();
        try {
          again = await attempt;
        } catch (error) {
          assert.ok(error instanceof VoxcolError && error.code === Status.UNAVAILABLE, String(error));
          await new Promise((r) => setTimeout(r, 100));
        }
      }
      assert.ok(again !== undefined, "the batcher answered again after the restart");
      assert.deepEqual(again, expected, "the same answer from the restarted server");
      await batcher.close();
    } finally {
      restartable.close();
      await own.dispose();
    }
  });

  test("close() waits for the answers; a closed batcher or client refuses queries", async () => {
    const closing = await connect(server.target);
    const batcher = closing.batcher();
    const answered = batcher.raycast(downRay(1.5, 1.5));
    void batcher.flush();
    const unflushed = batcher.raycast(downRay(2.5, 2.5));
    const status = await batcher.close();
    assert.equal(status.code, Status.OK);
    assert.equal((await answered).hit, true);
    await assert.rejects(unflushed, ClientClosedError);
    await assert.rejects(batcher.raycast(downRay(0, 0)), ClientClosedError);
    await assert.rejects(batcher.flush(), ClientClosedError);

    const second = closing.batcher();
    const cut = second.contacts({ shape: { shape: { sphere: { radius: 60 } }, position: { x: 3, y: 3, z: 3 } } });
    const batch = second.flush();
    closing.close();
    await assert.rejects(cut, (e: unknown) => e instanceof ClientClosedError && e.code === Status.CANCELLED);
    const [failed] = await batch;
    assert.ok(failed!.error instanceof ClientClosedError);
  });

  test("wrong argument types reject that query only", async () => {
    const batcher = client.batcher();
    const bad = batcher.raycast({ origin: { x: 1, y: "2" as never, z: 3 } });
    const good = batcher.raycast(downRay(3.5, 3.5));
    await assert.rejects(bad, /batcher\.raycast: INVALID_ARGUMENT: request\.raycast\.origin\.y must be a number/);
    assert.equal(batcher.queued, 1);
    await batcher.flush();
    assert.equal((await good).hit, true);
    await assert.rejects(batcher.flush({ minVersion: "soon" as never }), /minVersion must be a uint64/);
    await batcher.close();
  });
});
