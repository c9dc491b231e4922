// The TypeScript client's conformance runner (tests/conformance/README.md): runs one scenario
// file through this package's VoxcolClient (its QueryBatcher for QueryService.Query) and writes
// one JSON line per step; with --throughput_seconds it measures rays per second through the
// batcher instead.
import { readFileSync, writeFileSync } from "node:fs";

import type { JsonValue } from "@bufbuild/protobuf";
import type { ClientDuplexStream } from "@grpc/grpc-js";

import type { BatchAnswer, QueryBatcher } from "./batcher";
import { VoxcolClient, type ClientOptions } from "./client";
import { Status, VoxcolError } from "./errors";
import * as admin from "./gen/voxcol/v1/admin_service";
import * as body from "./gen/voxcol/v1/body_service";
import * as edit from "./gen/voxcol/v1/edit_service";
import * as query from "./gen/voxcol/v1/query_service";
import * as replica from "./gen/voxcol/v1/replica_service";
import * as types from "./gen/voxcol/v1/types";
import * as world from "./gen/voxcol/v1/world_service";
import { messageFromJson, messageToJson, registry } from "./schema";

/** Encoder and decoder of one generated message type. */
interface MessageFns<T> {
  encode(message: T): { finish(): Uint8Array };
  decode(input: Uint8Array): T;
}

const generated: Record<string, unknown> = { ...types, ...body, ...query, ...edit, ...world, ...admin, ...replica };

function fnsOf(typeName: string): MessageFns<unknown> {
  const fns = generated[typeName.slice(typeName.lastIndexOf(".") + 1)];
  if (typeof fns !== "object" || fns === null || !("encode" in fns) || !("decode" in fns)) {
    throw new Error(`no generated code for ${typeName}`);
  }
  return fns as MessageFns<unknown>;
}

/** Input and output types of `Service.Method`, from the descriptors. */
function methodTypes(call: string): { input: string; output: string } {
  const [service, name] = call.split(".");
  const desc = registry.getService(`voxcol.v1.${service ?? ""}`)?.methods.find((m) => m.name === name);
  if (desc === undefined) throw new RunnerError(`unknown call ${call}`);
  return { input: desc.input.typeName, output: desc.output.typeName };
}

export class RunnerError extends Error {}

function parse(typeName: string, json: unknown, call: string): unknown {
  try {
    return fnsOf(typeName).decode(messageFromJson(typeName, json as JsonValue));
  } catch (error) {
    throw new RunnerError(`${call}: the scenario's request is not a ${typeName}: ${(error as Error).message}`);
  }
}

function print(typeName: string, message: unknown): JsonValue {
  return messageToJson(typeName, fnsOf(typeName).encode(message).finish());
}

interface Step {
  call: string;
  request?: unknown;
  requests?: unknown[];
  take?: number;
}

interface StepResult {
  code: number;
  message: string;
  responses: JsonValue[];
}

type UnaryMethod = (client: VoxcolClient, request: never) => Promise<unknown>;

/** Every unary RPC of the proto, through the client's own method for it. */
export const UNARY_CALLS: Record<string, UnaryMethod> = {
  "WorldService.GetWorldInfo": (c, r) => c.getWorldInfo(r),
  "WorldService.CreateWorld": (c, r) => c.createWorld(r),
  "WorldService.DeleteWorld": (c, r) => c.deleteWorld(r),
  "WorldService.ListWorlds": (c, r) => c.listWorlds(r),
  "QueryService.Raycast": (c, r) => c.raycast(r),
  "QueryService.Sweep": (c, r) => c.sweep(r),
  "QueryService.Overlap": (c, r) => c.overlap(r),
  "QueryService.Contacts": (c, r) => c.contacts(r),
  "QueryService.Probe": (c, r) => c.probe(r),
  "QueryService.MoveCharacters": (c, r) => c.moveCharacters(r),
  "QueryService.ValidateHit": (c, r) => c.validateHit(r),
  "QueryService.FindPath": (c, r) => c.findPath(r),
  "QueryService.GetNavMesh": (c, r) => c.getNavMesh(r),
  "BodyService.UpdateBodies": (c, r) => c.updateBodies(r),
  "BodyService.ListBodies": (c, r) => c.listBodies(r),
  "EditService.FillBall": (c, r) => c.fillBall(r),
  "EditService.ApplyEdits": (c, r) => c.applyEdits(r),
  "EditService.ReadVoxels": (c, r) => c.readVoxels(r),
  "EditService.WriteVoxels": (c, r) => c.writeVoxels(r),
  "AdminService.CreateCheckpoint": (c, r) => c.createCheckpoint(r),
  "AdminService.ExportRegion": (c, r) => c.exportRegion(r),
  "AdminService.ImportRegion": (c, r) => c.importRegion(r),
  "ReplicaService.GetReplicaStatus": (c, r) => c.getReplicaStatus(r),
};

/** The streaming RPCs the runner handles itself. */
export const STREAM_CALLS = [
  "QueryService.Query",
  "EditService.EditStream",
  "EditService.Subscribe",
  "QueryService.WatchPaths",
];

function failure(error: unknown): StepResult {
  if (error instanceof VoxcolError) return { code: error.code, message: error.details, responses: [] };
  throw error;
}

async function runUnary(client: VoxcolClient, step: Step): Promise<StepResult> {
  const method = UNARY_CALLS[step.call];
  if (method === undefined) throw new RunnerError(`unknown call ${step.call}`);
  const { input, output } = methodTypes(step.call);
  const request = parse(input, step.request ?? {}, step.call);
  try {
    const response = await method(client, request as never);
    return { code: Status.OK, message: "", responses: [print(output, response)] };
  } catch (error) {
    return failure(error);
  }
}

async function runSubscribe(client: VoxcolClient, step: Step): Promise<StepResult> {
  const request = parse("voxcol.v1.SubscribeRequest", step.request ?? {}, step.call) as edit.SubscribeRequest;
  const take = step.take ?? 0;
  const responses: JsonValue[] = [];
  const subscription = client.subscribe(request);
  try {
    while (responses.length < take) {
      const next = await subscription.next();
      if (next.done === true) break;
      responses.push(print("voxcol.v1.SubscribeResponse", next.value));
    }
  } catch (error) {
    return { ...failure(error), responses };
  } finally {
    subscription.cancel();
  }
  // A feed that ended by itself before `take` responses (it stays live otherwise).
  return responses.length === take
    ? { code: Status.OK, message: "", responses }
    : { code: Status.UNAVAILABLE, message: "the feed ended early", responses };
}

/** Every request on one bidirectional stream, half-close, every response until the status. */
async function runEditStream(client: VoxcolClient, step: Step): Promise<StepResult> {
  return runDuplex(step, client.openEditStream(), "voxcol.v1.EditStreamRequest", "voxcol.v1.EditStreamResponse");
}

async function runWatchPaths(client: VoxcolClient, step: Step): Promise<StepResult> {
  return runDuplex(step, client.openWatchPaths(), "voxcol.v1.WatchPathsRequest", "voxcol.v1.WatchPathsResponse");
}

async function runDuplex(
  step: Step,
  // eslint-disable-next-line @typescript-eslint/no-explicit-any
  call: ClientDuplexStream<any, any>,
  requestType: string,
  responseType: string,
): Promise<StepResult> {
  const requests = (step.requests ?? []).map((json) => parse(requestType, json, step.call));
  const responses: JsonValue[] = [];
  return new Promise<StepResult>((resolve) => {
    // Done once the status is in and every response before it was read.
    let status: { code: number; details: string } | undefined;
    let ended = false;
    const done = () => {
      if (status !== undefined && ended) {
        resolve({ code: status.code, message: status.code === Status.OK ? "" : status.details, responses });
      }
    };
    call.on("data", (response: unknown) => responses.push(print(responseType, response)));
    call.on("error", () => undefined);
    call.on("status", (s) => {
      status = s;
      done();
    });
    call.on("end", () => {
      ended = true;
      done();
    });
    call.on("close", () => {
      ended = true;
      done();
    });
    for (const request of requests) call.write(request);
    call.end();
  });
}

/**
 * Each `requests` entry as one batch of the client's QueryBatcher, all on one stream: queries
 * queued and flushed (flushTick with edits, raycasts() for packed rays alone), the batcher's
 * send() for the combinations the tick methods do not make; then close() (half-close, every
 * answer read). Batch ids are the batcher's own.
 */
async function runQuery(client: VoxcolClient, step: Step): Promise<StepResult> {
  const entries = (step.requests ?? []).map(
    (json) => parse("voxcol.v1.QueryBatchRequest", json, step.call) as query.QueryBatchRequest,
  );
  // Batches exactly as given: no read-your-writes floor, no default deadline, no splitting.
  const batcher: QueryBatcher = client.batcher({ readYourWrites: false, maxBatchQueries: 1 << 30 });
  const responses: JsonValue[] = [];
  const answers: Promise<void>[] = [];
  const record = (answer: BatchAnswer) => {
    if (answer.response !== undefined) responses.push(print("voxcol.v1.QueryBatchResponse", answer.response));
  };
  for (const entry of entries) {
    const options = {
      minVersion: entry.minVersion,
      timeoutMs: entry.timeoutMs,
      readAt: entry.readAt,
      world: entry.world,
    };
    if (entry.edits !== undefined) {
      for (const q of entry.queries) void batcher.add(q);
      answers.push(batcher.flushTick(entry.edits, { ...options, raycasts: entry.raycasts }).then(record));
    } else if (entry.raycasts !== undefined && entry.queries.length === 0) {
      answers.push(batcher.raycasts(entry.raycasts, options).then(record));
    } else if (entry.raycasts === undefined && entry.queries.length > 0) {
      for (const q of entry.queries) void batcher.add(q);
      answers.push(batcher.flush(options).then((batches) => batches.forEach(record)));
    } else {
      answers.push(batcher.send(entry).then(record));
    }
  }
  const status = await batcher.close();
  await Promise.all(answers);
  return { code: status.code, message: status.code === Status.OK ? "" : status.details, responses };
}

export async function runStep(client: VoxcolClient, step: Step): Promise<StepResult> {
  switch (step.call) {
    case "QueryService.Query":
      return runQuery(client, step);
    case "EditService.EditStream":
      return runEditStream(client, step);
    case "QueryService.WatchPaths":
      return runWatchPaths(client, step);
    case "EditService.Subscribe":
      return runSubscribe(client, step);
    default:
      return runUnary(client, step);
  }
}

export interface RunnerFlags {
  target: string;
  scenario?: string;
  out?: string;
  secureTarget?: string;
  ca?: string;
  token?: string;
  throughputSeconds?: number;
}

export async function runScenario(flags: RunnerFlags): Promise<void> {
  const scenario = JSON.parse(readFileSync(flags.scenario ?? "", "utf8")) as {
    name: string;
    secure?: boolean;
    steps: Step[];
  };
  let target = flags.target;
  const options: ClientOptions = { timeoutMs: 10_000 };
  if (scenario.secure === true) {
    if (flags.secureTarget === undefined || flags.ca === undefined || flags.token === undefined) {
      throw new RunnerError(`${scenario.name} needs --secure_target, --ca and --token`);
    }
    target = flags.secureTarget;
    options.tls = { ca: readFileSync(flags.ca, "utf8") };
    options.token = flags.token;
  }
  const client = new VoxcolClient(target, options);
  const lines: string[] = [];
  try {
    for (const [index, step] of scenario.steps.entries()) {
      const result = await runStep(client, step);
      lines.push(
        JSON.stringify({
          scenario: scenario.name,
          step: index,
          call: step.call,
          code: result.code,
          message: result.message,
          responses: result.responses,
        }),
      );
    }
  } finally {
    client.close();
  }
  writeFileSync(flags.out ?? "", lines.map((line) => `${line}\n`).join(""));
}

/** splitmix32: a small fixed-seed generator for the throughput rays. */
function rng(seed: number): () => number {
  let state = seed >>> 0;
  return () => {
    state = (state + 0x9e3779b9) >>> 0;
    let z = state;
    z = Math.imul(z ^ (z >>> 16), 0x85ebca6b) >>> 0;
    z = Math.imul(z ^ (z >>> 13), 0xc2b2ae35) >>> 0;
    return ((z ^ (z >>> 16)) >>> 0) / 2 ** 32;
  };
}

/**
 * Rays per second through the QueryBatcher: each round queues 256 raycasts (straight down from
 * y 40, max distance 90, x and z uniform in [-60, 60) from a fixed seed) and flushes, at most 4
 * rounds in flight; counted for `seconds` after one second of warm-up.
 */
export async function runThroughput(target: string, seconds: number): Promise<number> {
  const client = new VoxcolClient(target);
  const batcher = client.batcher();
  const random = rng(7);
  const start = performance.now();
  const counting = start + 1000;
  const end = counting + seconds * 1000;
  let rays = 0;
  const inFlight: Promise<BatchAnswer[]>[] = [];
  const finishOldest = async () => {
    const answers = await inFlight.shift()!;
    const now = performance.now();
    for (const answer of answers) {
      if (answer.error !== undefined) throw new RunnerError(`a throughput batch failed: ${answer.error.message}`);
      for (const result of answer.results) {
        if (result.code !== Status.OK) throw new RunnerError(`a throughput ray failed: ${result.message}`);
        if (now >= counting) rays++;
      }
    }
  };
  try {
    while (performance.now() < end) {
      for (let i = 0; i < 256; i++) {
        void batcher.raycast({
          origin: { x: random() * 120 - 60, y: 40, z: random() * 120 - 60 },
          direction: { y: -1 },
          maxDistance: 90,
        });
      }
      inFlight.push(batcher.flush());
      if (inFlight.length >= 4) await finishOldest();
    }
    while (inFlight.length > 0) await finishOldest();
    return rays / ((performance.now() - counting) / 1000);
  } finally {
    await batcher.close();
    client.close();
  }
}

const USAGE =
  "usage: voxcol-conformance --target HOST:PORT --scenario FILE --out FILE " +
  "[--secure_target HOST:PORT --ca CA_PEM_FILE --token TOKEN]\n" +
  "       voxcol-conformance --target HOST:PORT --throughput_seconds N";

export function parseFlags(argv: string[]): RunnerFlags {
  const names: Record<string, keyof RunnerFlags> = {
    "--target": "target",
    "--scenario": "scenario",
    "--out": "out",
    "--secure_target": "secureTarget",
    "--ca": "ca",
    "--token": "token",
    "--throughput_seconds": "throughputSeconds",
  };
  const flags: Partial<Record<keyof RunnerFlags, string>> = {};
  for (let i = 0; i < argv.length; i += 2) {
    let name = argv[i]!;
    let value = argv[i + 1];
    const eq = name.indexOf("=");
    if (eq > 0) {
      value = name.slice(eq + 1);
      name = name.slice(0, eq);
      i--;
    }
    const key = names[name];
    if (key === undefined) throw new RunnerError(`unknown flag ${name}\n${USAGE}`);
    if (value === undefined) throw new RunnerError(`${name} needs a value\n${USAGE}`);
    flags[key] = value;
  }
  if (flags.target === undefined) throw new RunnerError(`--target is required\n${USAGE}`);
  const result: RunnerFlags = { target: flags.target };
  if (flags.throughputSeconds !== undefined) {
    const seconds = Number(flags.throughputSeconds);
    if (!(seconds > 0)) throw new RunnerError(`--throughput_seconds must be a positive number\n${USAGE}`);
    result.throughputSeconds = seconds;
    return result;
  }
  if (flags.scenario === undefined || flags.out === undefined) {
    throw new RunnerError(`--scenario and --out are required (or --throughput_seconds)\n${USAGE}`);
  }
  for (const key of ["scenario", "out", "secureTarget", "ca", "token"] as const) {
    if (flags[key] !== undefined) result[key] = flags[key];
  }
  return result;
}

export async function main(argv: string[]): Promise<number> {
  try {
    const flags = parseFlags(argv);
    if (flags.throughputSeconds !== undefined) {
      const rate = await runThroughput(flags.target, flags.throughputSeconds);
      process.stdout.write(`rays_per_second=${Math.round(rate)}\n`);
    } else {
      await runScenario(flags);
    }
    return 0;
  } catch (error) {
    process.stderr.write(`voxcol-conformance: ${error instanceof Error ? error.message : String(error)}\n`);
    return 2;
  }
}
