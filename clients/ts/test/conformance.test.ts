// The conformance runner (bin voxcol-conformance) against real servers: every RPC covered, the
// output format of tests/conformance/README.md, the repository's scenarios, throughput mode.
import assert from "node:assert/strict";
import { execFile } from "node:child_process";
import { existsSync, readFileSync, readdirSync, rmSync } from "node:fs";
import { join, resolve } from "node:path";
import { describe, test } from "node:test";
import { promisify } from "node:util";

import { STREAM_CALLS, UNARY_CALLS } from "@voxcol/client/conformance";

import { TestServer, cliJson, f32, makeTls, scratchDir, tlsFlags } from "./helpers";

const run = promisify(execFile);
const ROOT = resolve(__dirname, "..", "..");
const RUNNER = join(ROOT, "dist", "bin", "voxcol-conformance.js");
const FIXTURE = join(ROOT, "test", "fixtures", "every_rpc.json");
const REPO_SCENARIOS = resolve(ROOT, "..", "..", "tests", "conformance", "scenarios");
const PROTO_DIR = resolve(ROOT, "..", "..", "proto", "voxcol", "v1");

interface Line {
  scenario: string;
  step: number;
  call: string;
  code: number;
  message: string;
  responses: Record<string, unknown>[];
}

interface Scenario {
  name: string;
  secure?: boolean;
  steps: { call: string; expect_code?: number }[];
}

async function runScenario(file: string, extra: string[] = [], target?: string): Promise<Line[]> {
  const dir = scratchDir("out");
  const out = join(dir, "out.jsonl");
  const server = target === undefined ? await TestServer.start() : undefined;
  try {
    await run(process.execPath, [RUNNER, "--target", target ?? server!.target, "--scenario", file, "--out", out, ...extra], { timeout: 120_000 });
    return readFileSync(out, "utf8").trimEnd().split("\n").map((line) => JSON.parse(line) as Line);
  } finally {
    await server?.dispose();
    rmSync(dir, { recursive: true, force: true });
  }
}

function checkCodes(scenario: Scenario, lines: Line[]): void {
  assert.equal(lines.length, scenario.steps.length, `${scenario.name}: one line per step`);
  for (const [i, step] of scenario.steps.entries()) {
    const line = lines[i]!;
    assert.equal(line.scenario, scenario.name);
    assert.equal(line.step, i);
    assert.equal(line.call, step.call);
    assert.equal(line.code, step.expect_code ?? 0, `${scenario.name} step ${i} (${step.call}): ${line.message}`);
  }
}

describe("conformance runner", () => {
  test("the runner has a path for every RPC of the proto", () => {
    const rpcs: string[] = [];
    for (const file of readdirSync(PROTO_DIR).filter((f) => f.endsWith(".proto"))) {
      let service = "";
      for (const line of readFileSync(join(PROTO_DIR, file), "utf8").split("\n")) {
        const s = /^service (\w+)/.exec(line);
        if (s !== null) service = s[1]!;
        const m = /^\s*rpc (\w+)\(/.exec(line);
        if (m !== null) rpcs.push(`${service}.${m[1]!}`);
      }
    }
    assert.equal(rpcs.length, 27, `RPCs found: ${rpcs.join(", ")}`);
    assert.deepEqual([...Object.keys(UNARY_CALLS), ...STREAM_CALLS].sort(), rpcs.sort());
    const fixture = JSON.parse(readFileSync(FIXTURE, "utf8")) as Scenario;
    assert.deepEqual([...new Set(fixture.steps.map((s) => s.call))].sort(), rpcs.sort(), "the fixture calls every RPC");
  });

  test("every RPC through the runner, checked against the CLI and the server's own rules", async () => {
    const server = await TestServer.start();
    let lines: Line[];
    let cli: { first: { distance: number; position: { y: number } } };
    try {
      cli = (await cliJson(server.target, ["raycast", "--origin=0.5,40,0.5", "--max_distance=90"])) as typeof cli;
      lines = await runScenario(FIXTURE, [], server.target);
    } finally {
      await server.dispose();
    }
    const scenario = JSON.parse(readFileSync(FIXTURE, "utf8")) as Scenario;
    checkCodes(scenario, lines);
    const byCall = (call: string) => lines.filter((l) => l.call === call);

    const ray = byCall("QueryService.Raycast")[0]!.responses[0] as { first: { distance: number; position: { y: number } } };
    assert.equal(ray.first.distance, f32(cli.first.distance));
    assert.equal(ray.first.position.y, f32(cli.first.position.y));
    assert.deepEqual(byCall("QueryService.Raycast")[1]!.responses, [], "a failed unary call has no response");

    const query = byCall("QueryService.Query")[0]!.responses as {
      version?: string; code?: number; results?: { clientId?: string; code?: number }[];
      editAck?: { version: string }; raycasts?: { codes: number[] };
    }[];
    assert.equal(query.length, 4, "one response per batch (in the order they arrived)");
    const plain = query.find((r) => r.results?.length === 2);
    const tick = query.find((r) => r.editAck !== undefined);
    const packed = query.find((r) => r.raycasts !== undefined);
    const held = query.find((r) => (r.code ?? 0) !== 0);
    assert.deepEqual(plain!.results!.map((r) => [r.clientId, r.code ?? 0]), [["1", 0], ["2", 3]]);
    assert.ok(tick!.editAck !== undefined && tick!.editAck.version === tick!.version);
    assert.deepEqual(packed!.raycasts!.codes, [0, 0]);
    assert.equal(held!.code, 9, "minVersion 1000 is not reached: FAILED_PRECONDITION");

    const feed = byCall("EditService.Subscribe")[0]!.responses as { version: string }[];
    assert.deepEqual(feed.map((r) => r.version), ["1", "2", "3"]);
    const stream = byCall("EditService.EditStream")[0]!.responses as { ack?: unknown; error?: { code: number } }[];
    assert.ok(stream[0]!.ack !== undefined);
    assert.equal(stream[1]!.error!.code, 3);
    const watch = byCall("QueryService.WatchPaths")[0]!.responses as { event: string; errorCode: number }[];
    assert.deepEqual(watch.map((r) => [r.event, r.errorCode]), [["PATH_WATCH_EVENT_REFUSED", 5]], "an unknown unwatch");
  });

  test("the repository's scenarios run with the codes they expect", { timeout: 240_000, skip: !existsSync(REPO_SCENARIOS) }, async () => {
    const files = readdirSync(REPO_SCENARIOS).filter((f) => f.endsWith(".json")).sort();
    assert.ok(files.length > 0);
    const tls = makeTls();
    for (const file of files) {
      const path = join(REPO_SCENARIOS, file);
      const scenario = JSON.parse(readFileSync(path, "utf8")) as Scenario;
      let lines: Line[];
      if (scenario.secure === true) {
        const plain = await TestServer.start();
        const secure = await TestServer.start({ flags: tlsFlags(tls) });
        try {
          lines = await runScenario(path, ["--secure_target", secure.target, "--ca", tls.caFile, "--token", tls.tokens.admin], plain.target);
        } finally {
          await Promise.all([plain.dispose(), secure.dispose()]);
        }
      } else {
        lines = await runScenario(path);
      }
      checkCodes(scenario, lines);
    }
    rmSync(tls.dir, { recursive: true, force: true });
  });

  test("throughput mode prints rays_per_second", { timeout: 60_000 }, async () => {
    const server = await TestServer.start();
    try {
      const { stdout } = await run(process.execPath, [RUNNER, "--throughput_seconds", "1", "--target", server.target], { timeout: 30_000 });
      const match = /^rays_per_second=(\d+)\n$/.exec(stdout);
      assert.ok(match !== null, stdout);
      assert.ok(Number(match[1]) > 1000, stdout);
    } finally {
      await server.dispose();
    }
  });

  test("bad command lines exit 2 with the usage", async () => {
    for (const args of [[], ["--target", "127.0.0.1:1", "--scenario", FIXTURE], ["--bogus", "x"], ["--target", "x", "--throughput_seconds", "-1"]]) {
      await assert.rejects(run(process.execPath, [RUNNER, ...args]), (e: unknown) => {
        const error = e as { code: number; stderr: string };
        assert.equal(error.code, 2);
        assert.match(error.stderr, /voxcol-conformance: /);
        return true;
      });
    }
  });
});
