// Unary calls of every service against a real server, checked against independent facts (the
// CLI's --json answer for the same ray, ReadVoxels after an edit), and the client's errors.
import assert from "node:assert/strict";
import { after, before, describe, test } from "node:test";

import {
  ClientClosedError,
  EditMode,
  HitVerdict,
  RaycastMode,
  Status,
  VoxcolArgumentError,
  VoxcolClient,
  VoxcolError,
  connect,
} from "@voxcol/client";

import { TestServer, cliJson, downRay, f32 } from "./helpers";

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

/** Index of voxel (x, y, z) in a ReadVoxels box starting at `min` with `nx` x `nz` columns. */
function voxelIndex(p: { x: number; y: number; z: number }, min: { x: number; y: number; z: number }, nx: number, nz: number) {
  return p.x - min.x + (p.z - min.z) * nx + (p.y - min.y) * nx * nz;
}

describe("unary calls", () => {
  test("raycast equals the CLI's answer for the same ray", async () => {
    const ours = await client.raycast(downRay(0.5, 0.5));
    const cli = (await cliJson(server.target, ["raycast", "--origin=0.5,40,0.5", "--max_distance=90"])) as {
      hit: boolean;
      first: { distance: number; position: Record<string, number>; normal: Record<string, number>; material: number; triangle: number; voxel: Record<string, number> };
      version: string;
    };
    assert.equal(ours.hit, true);
    assert.equal(cli.hit, true);
    assert.ok(ours.first !== undefined);
    assert.equal(ours.first.distance, f32(cli.first.distance));
    for (const axis of ["x", "y", "z"] as const) {
      assert.equal(ours.first.position?.[axis], f32(cli.first.position[axis] ?? 0), `position.${axis}`);
      assert.equal(ours.first.normal?.[axis], f32(cli.first.normal[axis] ?? 0), `normal.${axis}`);
      assert.equal(ours.first.voxel?.[axis], cli.first.voxel[axis] ?? 0, `voxel.${axis}`);
    }
    assert.equal(ours.first.material, cli.first.material);
    assert.equal(ours.first.triangle, cli.first.triangle);
    assert.equal(ours.version, BigInt(cli.version));
  });

  test("world info describes the 128x96x128 test world", async () => {
    const info = await client.getWorldInfo();
    assert.deepEqual(info.voxelBounds, { min: { x: -64, y: -48, z: -64 }, max: { x: 64, y: 48, z: 64 } });
    assert.equal(info.voxelSize, 1);
  });

  test("a carve shows in ReadVoxels and moves the raycast's hit down", async () => {
    const before = await client.raycast(downRay(10.5, 10.5));
    assert.ok(before.hit && before.first?.position !== undefined);
    const ground = before.first.position;
    const ack = await client.fillBall({ center: ground, radius: 3, material: 0 });
    assert.ok(ack.version > before.version);
    assert.ok(ack.changedChunks > 0);
    assert.equal(client.readFloor(), ack.version, "the ack raised the read-your-writes floor");

    const voxel = { x: Math.floor(ground.x), y: Math.floor(ground.y) - 1, z: Math.floor(ground.z) };
    const min = { x: voxel.x - 1, y: voxel.y - 1, z: voxel.z - 1 };
    const read = await client.readVoxels({ region: { min, max: { x: voxel.x + 2, y: voxel.y + 2, z: voxel.z + 2 } } });
    assert.equal(read.version, ack.version);
    assert.ok(read.voxels !== undefined);
    const index = voxelIndex(voxel, min, 3, 3);
    assert.equal(read.voxels.materials[index], 0, "the voxel under the old hit is air now");
    assert.equal(read.voxels.occupancies[index], 0);

    const afterwards = await client.raycast(downRay(10.5, 10.5));
    assert.equal(afterwards.version, ack.version);
    assert.ok(afterwards.hit && afterwards.first !== undefined);
    assert.ok(afterwards.first.distance > before.first!.distance + 1, "the hit moved down into the carved hole");
  });

  test("applyEdits and writeVoxels write what ReadVoxels reads back", async () => {
    const region = { min: { x: 30, y: 40, z: 30 }, max: { x: 32, y: 42, z: 32 } };
    const ack = await client.applyEdits({
      primitives: [{ fillRegion: { region, material: 3, mode: EditMode.EDIT_MODE_SET } }],
      idempotencyKey: "ts-apply-1",
    });
    const again = await client.applyEdits({
      primitives: [{ fillRegion: { region, material: 3, mode: "EDIT_MODE_SET" as never } }],
      idempotencyKey: "ts-apply-1",
    });
    assert.equal(again.replayed, true);
    assert.equal(again.version, ack.version);
    let read = await client.readVoxels({ region });
    assert.deepEqual([...read.voxels!.materials], new Array(8).fill(3));

    const materials = Uint8Array.from([2, 3, 4, 5, 2, 3, 4, 5]);
    const occupancies = Uint8Array.from([255, 255, 255, 255, 128, 128, 128, 128]);
    const written = await client.writeVoxels({ voxels: { region, materials, occupancies } });
    assert.equal(written.version, ack.version + 1n);
    read = await client.readVoxels({ region });
    assert.deepEqual([...read.voxels!.materials], [...materials]);
    assert.deepEqual([...read.voxels!.occupancies], [...occupancies]);
  });

  test("shape queries answer on the smooth surface", async () => {
    const ground = (await client.raycast(downRay(-20.5, -20.5))).first!.position!;
    const sweep = await client.sweep({
      shape: { shape: { sphere: { radius: 0.5 } }, position: { x: ground.x, y: ground.y + 10, z: ground.z } },
      direction: { y: -1 },
      distance: 30,
    });
    assert.equal(sweep.hit, true);
    assert.ok(Math.abs(sweep.first!.shapePosition!.y - 0.5 - ground.y) < 0.6, "the sphere stops on the ground");

    const posed = { shape: { box: { halfExtents: { x: 0.5, y: 0.5, z: 0.5 } } }, position: ground };
    const overlap = await client.overlap({ shape: posed, includePenetration: true });
    assert.equal(overlap.touchesSolid, true);
    assert.ok(overlap.penetration!.depth > 0);
    const above = await client.overlap({ shape: { ...posed, position: { ...ground, y: ground.y + 5 } } });
    assert.equal(above.touchesSolid, false);

    const contacts = await client.contacts({ shape: { shape: { sphere: { radius: 0.5 } }, position: ground } });
    assert.ok(contacts.chunks.length > 0 && contacts.chunks[0]!.points.length > 0);

    const probe = await client.probe({ box: { center: ground, halfExtents: { x: 1, y: 1, z: 1 } } });
    assert.equal(probe.mayTouchSolid, true);

    const moved = await client.moveCharacters({
      moves: [{ clientId: 42n, radius: 0.4, halfHeight: 0.5, position: { ...ground, y: ground.y + 3 }, displacement: { y: -5 } }],
    });
    assert.equal(moved.results.length, 1);
    assert.equal(moved.results[0]!.clientId, 42n);
    assert.ok(moved.results[0]!.position!.y < ground.y + 3, "the character fell");

    const verdict = await client.validateHit({
      origin: { x: ground.x, y: 40, z: ground.z },
      direction: { y: -1 },
      claimedHit: ground,
      tolerance: 0.1,
      mode: RaycastMode.RAYCAST_MODE_SMOOTH,
    });
    assert.equal(verdict.verdict, HitVerdict.HIT_VERDICT_CONFIRMED);
  });

  test("worlds: create, use, list, delete", async () => {
    const created = await client.createWorld({ world: "ts-copy", templateWorld: "default" });
    assert.equal(created.world, "ts-copy");
    const other = new VoxcolClient(server.target, { world: "ts-copy" });
    try {
      const ack = await other.fillBall({ center: { x: 0, y: 0, z: 0 }, radius: 2, material: 2 });
      assert.equal(other.readFloor(), ack.version);
      assert.equal(other.readFloor("ts-copy"), ack.version);
      assert.equal(client.readFloor("ts-copy"), 0n, "floors are per client and world");
      const info = await other.getWorldInfo();
      assert.equal(info.version, ack.version);
    } finally {
      other.close();
    }
    const list = await client.listWorlds();
    assert.deepEqual(list.worlds.map((w) => w.world), ["default", "ts-copy"]);
    await client.deleteWorld({ world: "ts-copy" });
    await assert.rejects(client.getWorldInfo({ world: "ts-copy" }), (e: unknown) => e instanceof VoxcolError && e.code === Status.NOT_FOUND);
  });

  test("admin: export and import a region, checkpoint; replica status on a primary", async () => {
    const box = { min: { x: 0, y: 0, z: 0 }, max: { x: 4, y: 4, z: 4 } };
    const exported = await client.exportRegion({ box });
    assert.equal(Buffer.from(exported.region.subarray(0, 4)).toString(), "VXRG");
    assert.equal(exported.region.length, 32 + 2 * 64);
    // Importing what is already there changes no voxel: acknowledged at the current version,
    // no new one (issue 40).
    const ack = await client.importRegion({ region: exported.region });
    assert.equal(ack.version, exported.version);
    assert.equal(ack.changedChunks, 0);
    assert.equal(client.readFloor(), ack.version);
    const checkpoint = await client.createCheckpoint({ dir: "ts-checkpoint" });
    assert.ok(checkpoint.dir.endsWith("ts-checkpoint"));
    assert.ok(checkpoint.version >= exported.version);
    await assert.rejects(client.getReplicaStatus(), (e: unknown) => e instanceof VoxcolError && e.code === Status.FAILED_PRECONDITION);
    assert.equal(await client.checkHealth(), true);
  });
});

describe("errors", () => {
  test("the server's INVALID_ARGUMENT names the field", async () => {
    await assert.rejects(
      client.raycast({ origin: { x: 0.5, y: 40, z: 0.5 }, direction: {}, maxDistance: 90 }),
      (e: unknown) => e instanceof VoxcolError && !(e instanceof VoxcolArgumentError) && e.code === Status.INVALID_ARGUMENT && /direction/.test(e.details),
    );
  });

  test("wrong argument types are refused before sending, naming the field", async () => {
    const cases: [unknown, RegExp][] = [
      [{ origin: { x: "1", y: 40, z: 0 } }, /request\.origin\.x must be a number, got the string "1"/],
      [{ maxDist: 90 }, /request\.maxDist is not a field of voxcol\.v1\.RaycastRequest/],
      [{ origin: [1, 2, 3] }, /request\.origin must be an object \(Vec3\), got an array/],
      [{ mode: "SIDEWAYS" }, /request\.mode must be a RaycastMode value/],
      [{ allHits: 1 }, /request\.allHits must be a boolean/],
      [{ readAt: { atVersion: -1 } }, /request\.readAt\.atVersion must be in the uint64 range/],
      [{ readAt: { atVersion: 1, atServerTimeMicros: 2 } }, /set at most one of the oneof point/],
      ["ray", /request must be an object/],
    ];
    for (const [request, pattern] of cases) {
      await assert.rejects(client.raycast(request as never), (e: unknown) => {
        assert.ok(e instanceof VoxcolArgumentError, `${String(e)}`);
        assert.equal(e.code, Status.INVALID_ARGUMENT);
        assert.match(e.message, pattern);
        assert.match(e.message, /^QueryService\.Raycast: INVALID_ARGUMENT: /);
        return true;
      });
    }
    await assert.rejects(client.writeVoxels({ voxels: { materials: [1, 2] as never } }), /voxels\.materials must be a Uint8Array/);
    assert.throws(() => new VoxcolClient(42 as never), VoxcolArgumentError);
    assert.throws(() => new VoxcolClient(server.target, { tls: { ca: 7 as never } }), /options\.tls\.ca must be PEM text/);
    await assert.rejects(client.raycast(downRay(0, 0), { timeoutMs: -5 }), /options\.timeoutMs must be a positive number/);
  });

  test("a deadline too short for the query fails with DEADLINE_EXCEEDED", async () => {
    // A radius-64 sphere's contacts take tens of milliseconds; 1 ms cannot be met.
    const heavy = { shape: { shape: { sphere: { radius: 60 } }, position: { x: 0, y: 0, z: 0 } } };
    await assert.rejects(client.contacts(heavy, { timeoutMs: 1 }), (e: unknown) => {
      assert.ok(e instanceof VoxcolError);
      assert.equal(e.code, Status.DEADLINE_EXCEEDED);
      assert.equal(e.codeName, "DEADLINE_EXCEEDED");
      return true;
    });
  });

  test("an aborted call rejects with CANCELLED", async () => {
    const controller = new AbortController();
    const call = client.contacts({ shape: { shape: { sphere: { radius: 60 } }, position: { x: 1, y: 1, z: 1 } } }, { signal: controller.signal });
    controller.abort();
    await assert.rejects(call, (e: unknown) => e instanceof VoxcolError && e.code === Status.CANCELLED);
  });

  test("an unreachable server fails connect() with UNAVAILABLE naming it", async () => {
    const probe = await TestServer.start();
    const target = probe.target;
    await probe.dispose(); // a port nothing listens on any more
    const started = Date.now();
    await assert.rejects(connect(target, { connectTimeoutMs: 5000 }), (e: unknown) => {
      assert.ok(e instanceof VoxcolError);
      assert.equal(e.code, Status.UNAVAILABLE);
      assert.ok(e.message.includes(target), e.message);
      return true;
    });
    assert.ok(Date.now() - started < 5000, "fails fast, not at the deadline");
  });

  test("an unknown world fails connect() with NOT_FOUND", async () => {
    await assert.rejects(connect(server.target, { world: "no-such-world" }), (e: unknown) => e instanceof VoxcolError && e.code === Status.NOT_FOUND);
  });

  test("a closed client rejects calls and cancels the ones in flight", async () => {
    const closing = await connect(server.target);
    const inFlight = closing.contacts({ shape: { shape: { sphere: { radius: 60 } }, position: { x: 2, y: 2, z: 2 } } });
    closing.close();
    await assert.rejects(inFlight, (e: unknown) => e instanceof ClientClosedError && e.code === Status.CANCELLED);
    await assert.rejects(closing.raycast(downRay(0, 0)), (e: unknown) => {
      assert.ok(e instanceof ClientClosedError);
      assert.match(e.message, /QueryService\.Raycast: CANCELLED: voxcol client is closed/);
      return true;
    });
    assert.throws(() => closing.batcher(), ClientClosedError);
    assert.equal(closing.isClosed, true);
  });
});
