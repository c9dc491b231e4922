// Subscribe, EditStream sessions, and TLS with bearer tokens against real servers.
import assert from "node:assert/strict";
import { rmSync } from "node:fs";
import { after, before, describe, test } from "node:test";

import { Status, VoxcolError, connect, type SubscribeResponse } from "@voxcol/client";

import { TestServer, downRay, makeTls, tlsFlags, type TlsMaterial } from "./helpers";

describe("streams", () => {
  let server: TestServer;
  before(async () => {
    server = await TestServer.start();
  });
  after(async () => {
    await server.dispose();
  });

  test("subscribe delivers each committed batch in order; cancel ends it", async () => {
    const client = await connect(server.target);
    try {
      const feed = client.subscribe({ fromVersion: 0n });
      const acks = [];
      for (const x of [-30, 0, 30]) acks.push(await client.fillBall({ center: { x, y: 5, z: 0 }, radius: 2, material: 2 }));
      const seen: SubscribeResponse[] = [];
      for await (const change of feed) {
        seen.push(change);
        if (seen.length === 3) break; // ends the loop and cancels the feed
      }
      assert.deepEqual(seen.map((c) => c.version), acks.map((a) => a.version));
      assert.ok(seen.every((c) => c.changes.length > 0));
      // The first ball (x -30) changed chunks at x < 0 only.
      assert.ok(seen[0]!.changes.every((c) => c.chunk!.x < 0));
      assert.deepEqual(await feed.next(), { value: undefined, done: true });

      await assert.rejects(
        client.subscribe({ fromVersion: 1000n }).next(),
        (e: unknown) => e instanceof VoxcolError && e.code === Status.OUT_OF_RANGE,
      );
    } finally {
      client.close();
    }
  });

  test("an edit session acknowledges in order, raises the floor and replays resent keys", async () => {
    const client = await connect(server.target);
    try {
      const session = client.editSession({ keyPrefix: "ts-session-" });
      const acks = await Promise.all(
        [0, 1, 2, 3].map((i) => session.send({ primitives: [{ fillBall: { center: { x: 10 * i - 20, y: -20, z: 20 }, radius: 2, material: 3 } }] })),
      );
      const versions = acks.map((a) => a.version);
      assert.deepEqual(versions, [...versions].sort((a, b) => (a < b ? -1 : 1)));
      assert.equal(new Set(versions).size, 4);
      assert.equal(client.readFloor(), versions[3]);
      const bad = session.send({ primitives: [] });
      await assert.rejects(bad, (e: unknown) => e instanceof VoxcolError && e.code === Status.INVALID_ARGUMENT && /primitives/.test(e.details));
      await session.close();

      // A new session with the same keys: the batches were applied, so they come back replayed.
      const again = client.editSession({ keyPrefix: "ts-session-" });
      const replay = await again.send({ primitives: [{ fillBall: { center: { x: -20, y: -20, z: 20 }, radius: 2, material: 3 } }] });
      assert.equal(replay.replayed, true);
      assert.equal(replay.version, versions[0]);
      await again.close();
    } finally {
      client.close();
    }
  });
});

describe("TLS and tokens", () => {
  let tls: TlsMaterial;
  let server: TestServer;
  before(async () => {
    tls = makeTls();
    server = await TestServer.start({ flags: tlsFlags(tls) });
  });
  after(async () => {
    await server.dispose();
    rmSync(tls.dir, { recursive: true, force: true });
  });

  test("a CA and a token reach the secure server; roles apply", async () => {
    const client = await connect(server.target, { tls: { ca: tls.caPem }, token: tls.tokens.edit });
    try {
      const ray = await client.raycast(downRay(0.5, 0.5));
      assert.equal(ray.hit, true);
      const ack = await client.fillBall({ center: ray.first!.position, radius: 2 });
      assert.equal(ack.version, 1n);
      const batcher = client.batcher();
      const again = batcher.raycast(downRay(0.5, 0.5));
      await batcher.flush();
      assert.equal((await again).version, 1n);
      await batcher.close();
      await assert.rejects(
        client.createWorld({ world: "not-allowed", templateWorld: "default" }),
        (e: unknown) => e instanceof VoxcolError && e.code === Status.PERMISSION_DENIED,
      );
    } finally {
      client.close();
    }
    const reader = await connect(server.target, { tls: { ca: tls.caPem, serverName: "localhost" }, token: tls.tokens.query });
    try {
      await assert.rejects(reader.fillBall({ center: { x: 0, y: 0, z: 0 }, radius: 1 }), (e: unknown) => e instanceof VoxcolError && e.code === Status.PERMISSION_DENIED);
    } finally {
      reader.close();
    }
  });

  test("no token, a wrong token, an untrusted CA and plaintext all fail", async () => {
    await assert.rejects(connect(server.target, { tls: { ca: tls.caPem } }), (e: unknown) => e instanceof VoxcolError && e.code === Status.UNAUTHENTICATED);
    await assert.rejects(connect(server.target, { tls: { ca: tls.caPem }, token: "not-a-token" }), (e: unknown) => e instanceof VoxcolError && e.code === Status.UNAUTHENTICATED);
    await assert.rejects(connect(server.target, { tls: { ca: tls.otherCaPem }, token: tls.tokens.admin, connectTimeoutMs: 3000 }), (e: unknown) => e instanceof VoxcolError && e.code === Status.UNAVAILABLE);
    await assert.rejects(connect(server.target, { token: tls.tokens.admin, connectTimeoutMs: 3000 }), (e: unknown) => e instanceof VoxcolError && e.code === Status.UNAVAILABLE);
  });
});
