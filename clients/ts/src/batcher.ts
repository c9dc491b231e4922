// Typed batching over the QueryService.Query stream, the hot path for game servers: queue
// queries during a tick, flush once per tick, and await each query's own promise.
import type { ClientDuplexStream, StatusObject } from "@grpc/grpc-js";

import type { VoxcolClient } from "./client";
import { ClientClosedError, Status, VoxcolArgumentError, VoxcolError } from "./errors";
import type { ApplyEditsRequest, EditAck } from "./gen/voxcol/v1/edit_service";
import type {
  ContactsRequest,
  ContactsResponse,
  MoveCharactersRequest,
  MoveCharactersResponse,
  OverlapRequest,
  OverlapResponse,
  ProbeRequest,
  ProbeResponse,
  QueryBatchRequest,
  QueryBatchResponse,
  QueryRequest,
  QueryResult,
  RaycastArrayResults,
  RaycastArrays,
  RaycastRequest,
  RaycastResponse,
  ReadAt,
  SweepRequest,
  SweepResponse,
} from "./gen/voxcol/v1/query_service";
import type { Init } from "./schema";

export interface QueryBatcherOptions {
  /** Deadline of every batch from its arrival on the server (QueryBatchRequest.timeoutMs); 0 = none. */
  batchTimeoutMs?: number;
  /** Largest batch flush() sends; more queued queries go out as several batches. Default 256. */
  maxBatchQueries?: number;
  /**
   * After the stream broke, the next flush opens a new one, but not before this delay (doubled
   * after every failed attempt up to maxReconnectBackoffMs); until then flushed queries fail at
   * once with UNAVAILABLE instead of holding up the tick. Default 100.
   */
  reconnectBackoffMs?: number;
  /** Default 5000. */
  maxReconnectBackoffMs?: number;
  /** The world of every batch (default: the client's world). */
  world?: string;
  /**
   * Raise every batch's minVersion to the client's read-your-writes floor of the batch's world
   * (the version of the last edit acknowledged through the client there). Default true.
   */
  readYourWrites?: boolean;
}

/** Batch-level settings of one flush. */
export interface FlushOptions {
  /** Wait until the world reaches this version (read-your-writes); raised to the client's floor. */
  minVersion?: bigint | number;
  /** This batch's deadline from its arrival, in milliseconds (default: the batcher's batchTimeoutMs). */
  timeoutMs?: number;
  /** Read a past version (lag compensation); not with edits. */
  readAt?: Init<ReadAt>;
  /** The batch's world (default: the batcher's). */
  world?: string;
}

export interface TickOptions extends FlushOptions {
  /** Packed raycasts to send in the same batch (answered in BatchAnswer.raycasts). */
  raycasts?: Init<RaycastArrays>;
}

/** The outcome of one batch. Batch promises always resolve; a failure is in `code` and `error`. */
export interface BatchAnswer {
  /** The batch's gRPC code (OK, RESOURCE_EXHAUSTED when shed, ...) or the stream's when it broke. */
  code: Status;
  message: string;
  /** The same as a VoxcolError, undefined when OK. */
  error: VoxcolError | undefined;
  batchId: bigint;
  /** The world version every query of the batch read (0n when the batch failed). */
  version: bigint;
  /** Set when the batch's edits applied (or were replayed), also if its queries then failed. */
  editAck: EditAck | undefined;
  serverMicros: number;
  /** One result per query, in queue order (empty when the batch failed). */
  results: QueryResult[];
  /** The packed raycasts' answers, when the batch carried some and is OK. */
  raycasts: RaycastArrayResults | undefined;
  /** The server's response as received; undefined when the stream failed before it. */
  response: QueryBatchResponse | undefined;
}

type Kind = "raycast" | "sweep" | "overlap" | "contacts" | "probe" | "moveCharacters";

interface Entry {
  query: QueryRequest;
  /** Which result field resolves the promise; undefined: the whole QueryResult (add()). */
  kind: Kind | undefined;
  resolve: (value: never) => void;
  reject: (error: VoxcolError) => void;
}

interface PendingBatch {
  entries: Entry[];
  world: string;
  resolve: (answer: BatchAnswer) => void;
}

interface Connection {
  call: ClientDuplexStream<QueryBatchRequest, QueryBatchResponse>;
  status: StatusObject | undefined;
  ended: boolean;
  finished: boolean;
  done: Promise<void>;
}

const BATCH_OPERATION = "QueryService.Query";

function nonNegativeInt(value: unknown, what: string, min = 0): number | undefined {
  if (value === undefined) return undefined;
  if (typeof value !== "number" || !Number.isInteger(value) || value < min) {
    throw new VoxcolArgumentError(`${what} must be an integer >= ${min}, got ${String(value)}`);
  }
  return value;
}

/** Keeps a dropped promise's rejection from crashing the process; awaiting it still throws. */
function handled<T>(promise: Promise<T>): Promise<T> {
  promise.catch(() => undefined);
  return promise;
}

/**
 * Coalesces queries into QueryBatchRequests on one Query stream. The typed methods (raycast,
 * sweep, ...) and add() queue a query and return its promise; flush() sends what is queued (once
 * per tick); flushTick() sends edits and the queued queries as one batch; raycasts() sends packed
 * rays. A query's promise resolves with its response (its `version` the batch's) or rejects with
 * a VoxcolError carrying the query's own code, its batch's, or the stream's (UNAVAILABLE when it broke before the answer).
 * Dropped query promises do not raise unhandled rejections. Batches may be answered out of order.
 */
export class QueryBatcher {
  private readonly client: VoxcolClient;
  private readonly world: string;
  private readonly batchTimeoutMs: number;
  private readonly maxBatchQueries: number;
  private readonly initialBackoffMs: number;
  private readonly maxBackoffMs: number;
  private readonly readYourWrites: boolean;
  private readonly untrack: () => void;

  private queue: Entry[] = [];
  private readonly pending = new Map<bigint, PendingBatch>();
  private inFlightQueries = 0;
  private nextBatchId = 1n;
  private connection: Connection | undefined;
  private backoffMs: number;
  private nextAttemptAt = 0;
  private closed = false;

  /** Use VoxcolClient.batcher(). */
  constructor(client: VoxcolClient, options: QueryBatcherOptions = {}) {
    if (typeof options !== "object" || options === null) throw new VoxcolArgumentError("batcher options must be an object");
    this.client = client;
    if (options.world !== undefined && typeof options.world !== "string") {
      throw new VoxcolArgumentError("batcher options.world must be a string");
    }
    this.world = options.world ?? client.world;
    this.batchTimeoutMs = nonNegativeInt(options.batchTimeoutMs, "batcher options.batchTimeoutMs") ?? 0;
    this.maxBatchQueries = nonNegativeInt(options.maxBatchQueries, "batcher options.maxBatchQueries", 1) ?? 256;
    this.initialBackoffMs = nonNegativeInt(options.reconnectBackoffMs, "batcher options.reconnectBackoffMs") ?? 100;
    this.maxBackoffMs = Math.max(
      this.initialBackoffMs,
      nonNegativeInt(options.maxReconnectBackoffMs, "batcher options.maxReconnectBackoffMs") ?? 5000,
    );
    this.readYourWrites = options.readYourWrites ?? true;
    this.backoffMs = this.initialBackoffMs;
    this.untrack = client.track(this);
  }

  // ---- queueing ----------------------------------------------------------------------------

  raycast(request: Init<RaycastRequest>): Promise<RaycastResponse> {
    return this.enqueue({ raycast: request }, "raycast");
  }
  sweep(request: Init<SweepRequest>): Promise<SweepResponse> {
    return this.enqueue({ sweep: request }, "sweep");
  }
  overlap(request: Init<OverlapRequest>): Promise<OverlapResponse> {
    return this.enqueue({ overlap: request }, "overlap");
  }
  contacts(request: Init<ContactsRequest>): Promise<ContactsResponse> {
    return this.enqueue({ contacts: request }, "contacts");
  }
  probe(request: Init<ProbeRequest>): Promise<ProbeResponse> {
    return this.enqueue({ probe: request }, "probe");
  }
  moveCharacters(request: Init<MoveCharactersRequest>): Promise<MoveCharactersResponse> {
    return this.enqueue({ moveCharacters: request }, "moveCharacters");
  }
  /** Queues any query (its clientId is kept); the promise resolves with the whole QueryResult. */
  add(query: Init<QueryRequest>): Promise<QueryResult> {
    return this.enqueue(query, undefined);
  }

  /** Queries queued and not flushed yet. */
  get queued(): number {
    return this.queue.length;
  }
  /** Queries sent and not answered yet. */
  get inFlight(): number {
    return this.inFlightQueries;
  }

  // ---- sending -----------------------------------------------------------------------------

  /**
   * Sends every queued query, in batches of at most maxBatchQueries. Resolves with one
   * BatchAnswer per batch sent (none when nothing was queued); each query's own promise settles
   * as its batch is answered.
   */
  flush(options: FlushOptions = {}): Promise<BatchAnswer[]> {
    let base: QueryBatchRequest;
    try {
      this.throwIfClosed("flush");
      base = this.batchRequest(options, undefined, undefined);
    } catch (error) {
      return Promise.reject(error);
    }
    const entries = this.queue;
    this.queue = [];
    const answers: Promise<BatchAnswer>[] = [];
    for (let begin = 0; begin < entries.length; begin += this.maxBatchQueries) {
      const part = entries.slice(begin, begin + this.maxBatchQueries);
      answers.push(this.dispatch({ ...base, queries: part.map((e) => e.query) }, part));
    }
    return Promise.all(answers);
  }

  /**
   * A game-server tick: `edits` and every queued query as one batch (not split). The server
   * applies the edits first, durably, and the queries read exactly the version they produced;
   * the answer's editAck raises the client's read-your-writes floor.
   */
  flushTick(edits: Init<ApplyEditsRequest>, options: TickOptions = {}): Promise<BatchAnswer> {
    let request: QueryBatchRequest;
    try {
      this.throwIfClosed("flushTick");
      const normalized = this.client.prepare<ApplyEditsRequest>("ApplyEditsRequest", edits, "flushTick edits");
      normalized.world = ""; // the batch's world applies
      request = this.batchRequest(options, normalized, options.raycasts);
    } catch (error) {
      return Promise.reject(error);
    }
    const entries = this.queue;
    this.queue = [];
    request.queries = entries.map((e) => e.query);
    return this.dispatch(request, entries);
  }

  /**
   * Sends `rays` now as one batch of packed raycasts (queued queries stay queued). The answer's
   * `raycasts` has one entry per ray; a bad ray fails alone (its `codes` entry).
   */
  raycasts(rays: Init<RaycastArrays>, options: FlushOptions = {}): Promise<BatchAnswer> {
    let request: QueryBatchRequest;
    try {
      this.throwIfClosed("raycasts");
      request = this.batchRequest(options, undefined, rays);
    } catch (error) {
      return Promise.reject(error);
    }
    return this.dispatch(request, []);
  }

  /**
   * Sends one batch exactly as given (its own queries, edits, raycasts, readAt, world, timeoutMs;
   * minVersion raised to the read-your-writes floor) on the batcher's stream; the queue is left
   * alone and the batch id is the batcher's. The answer's `results` hold the queries' results.
   */
  send(batch: Init<QueryBatchRequest>): Promise<BatchAnswer> {
    let request: QueryBatchRequest;
    try {
      this.throwIfClosed("send");
      const given = this.client.prepare<QueryBatchRequest>("QueryBatchRequest", batch, "send");
      request = this.batchRequest(
        { minVersion: given.minVersion, timeoutMs: given.timeoutMs, readAt: given.readAt, world: given.world },
        given.edits,
        given.raycasts,
      );
      request.queries = given.queries;
    } catch (error) {
      return Promise.reject(error);
    }
    return this.dispatch(request, []);
  }

  /**
   * Half-closes the stream and waits until every sent batch is answered; resolves with the
   * stream's final status (OK when it ended normally). Queries still queued reject with
   * ClientClosedError. The batcher cannot be used afterwards.
   */
  async close(): Promise<{ code: Status; details: string }> {
    if (!this.closed) {
      this.closed = true;
      this.untrack();
      this.failQueued(new ClientClosedError("query batcher"));
    }
    const connection = this.connection;
    if (connection === undefined) return { code: Status.OK, details: "" };
    if (!connection.finished) {
      connection.call.end();
      await connection.done;
    }
    const status = connection.status;
    return status === undefined ? { code: Status.CANCELLED, details: "cancelled" } : { code: status.code, details: status.details };
  }

  /** Cancels the stream: queued and unanswered queries reject with `reason` (CANCELLED). */
  cancel(reason: VoxcolError = new ClientClosedError("query batcher")): void {
    if (this.closed && this.connection === undefined) return;
    this.closed = true;
    this.untrack();
    this.failQueued(reason);
    this.failPending(reason);
    const connection = this.connection;
    this.connection = undefined;
    if (connection !== undefined && !connection.finished) {
      connection.finished = true;
      connection.call.cancel();
    }
  }

  // ---- internals ---------------------------------------------------------------------------

  private throwIfClosed(operation: string): void {
    if (this.closed) throw new ClientClosedError("query batcher", operation);
    this.client.throwIfClosed(operation);
  }

  private enqueue<T>(query: unknown, kind: Kind | undefined): Promise<T> {
    let normalized: QueryRequest;
    try {
      this.throwIfClosed(kind ?? "add");
      normalized = this.client.prepare<QueryRequest>("QueryRequest", query, kind === undefined ? "add" : `batcher.${kind}`);
    } catch (error) {
      return handled(Promise.reject(error));
    }
    return handled(
      new Promise<T>((resolve, reject) => {
        this.queue.push({ query: normalized, kind, resolve: resolve as (value: never) => void, reject });
      }),
    );
  }

  private batchRequest(
    options: FlushOptions,
    edits: ApplyEditsRequest | undefined,
    rays: Init<RaycastArrays> | undefined,
  ): QueryBatchRequest {
    if (typeof options !== "object" || options === null) throw new VoxcolArgumentError("flush options must be an object");
    // Checks every batch-level field the way a request is checked, then applies the defaults.
    const request = this.client.prepare<QueryBatchRequest>(
      "QueryBatchRequest",
      {
        minVersion: options.minVersion,
        timeoutMs: options.timeoutMs,
        readAt: options.readAt,
        world: options.world,
        raycasts: rays,
      },
      "flush",
    );
    if (options.world === undefined) request.world = this.world;
    if (options.timeoutMs === undefined) request.timeoutMs = this.batchTimeoutMs;
    if (this.readYourWrites) {
      const floor = this.client.readFloor(request.world);
      if (floor > request.minVersion) request.minVersion = floor;
    }
    request.edits = edits;
    return request;
  }

  private dispatch(request: QueryBatchRequest, entries: Entry[]): Promise<BatchAnswer> {
    const connection = this.connect();
    if (connection === undefined) {
      const error = new VoxcolError(
        Status.UNAVAILABLE,
        "query stream: reconnecting after the stream broke (backoff)",
        { operation: BATCH_OPERATION },
      );
      this.failEntries(entries, error);
      return Promise.resolve(failedAnswer(0n, error));
    }
    const batchId = this.nextBatchId++;
    request.batchId = batchId;
    return new Promise<BatchAnswer>((resolve) => {
      this.pending.set(batchId, { entries, world: request.world, resolve });
      this.inFlightQueries += entries.length;
      // A write to a stream that broke meanwhile is dropped; its status fails this batch.
      connection.call.write(request);
    });
  }

  /** The open stream, a new one when the backoff allows, or undefined while it holds. */
  private connect(): Connection | undefined {
    if (this.connection !== undefined && !this.connection.finished) return this.connection;
    const now = Date.now();
    if (this.connection !== undefined && now < this.nextAttemptAt) return undefined;
    this.nextAttemptAt = now + this.backoffMs;
    this.backoffMs = Math.min(this.backoffMs * 2, this.maxBackoffMs);

    const call = this.client.openQueryStream();
    let settle!: () => void;
    const connection: Connection = {
      call,
      status: undefined,
      ended: false,
      finished: false,
      done: new Promise<void>((resolve) => (settle = resolve)),
    };
    const finish = () => {
      if (connection.status === undefined || !connection.ended) return;
      if (this.connection === connection) connection.finished = true;
      connection.finished = true;
      const status = connection.status;
      const error =
        status.code === Status.OK
          ? new VoxcolError(Status.UNAVAILABLE, "query stream ended before the answer", { operation: BATCH_OPERATION })
          : this.client.isClosed && status.code === Status.CANCELLED
            ? new ClientClosedError("voxcol client", BATCH_OPERATION)
            : new VoxcolError(status.code, status.details, { operation: BATCH_OPERATION, metadata: status.metadata });
      if (this.connection === connection) this.failPending(error);
      settle();
    };
    call.on("data", (response: QueryBatchResponse) => this.deliver(response));
    call.on("error", () => {
      // Reported again (with the buffered answers delivered first) through "status" and "end".
    });
    call.on("status", (status: StatusObject) => {
      connection.status = status;
      finish();
    });
    call.on("end", () => {
      connection.ended = true;
      finish();
    });
    call.on("close", () => {
      connection.ended = true;
      finish();
    });
    this.connection = connection;
    return connection;
  }

  private deliver(response: QueryBatchResponse): void {
    const batch = this.pending.get(response.batchId);
    if (batch === undefined) return;
    this.pending.delete(response.batchId);
    this.inFlightQueries -= batch.entries.length;
    this.backoffMs = this.initialBackoffMs; // the stream works: the next break retries soon

    if (response.editAck !== undefined) this.client.raiseFloor(response.editAck.version, batch.world);
    const error =
      response.code === Status.OK
        ? undefined
        : new VoxcolError(response.code, response.message, { operation: BATCH_OPERATION });
    const { entries } = batch;
    for (let i = 0; i < entries.length; i++) {
      const entry = entries[i]!;
      if (error !== undefined) {
        entry.reject(error);
        continue;
      }
      const result = response.results[i];
      if (result === undefined) {
        entry.reject(new VoxcolError(Status.INTERNAL, "batch response without this query's result", { operation: BATCH_OPERATION }));
      } else if (result.code !== Status.OK) {
        entry.reject(new VoxcolError(result.code, result.message, { operation: `${BATCH_OPERATION} ${entry.kind ?? "query"}` }));
      } else if (entry.kind === undefined) {
        entry.resolve(result as never);
      } else {
        const value = result[entry.kind];
        if (value === undefined) {
          entry.reject(new VoxcolError(Status.INTERNAL, `result without ${entry.kind}`, { operation: BATCH_OPERATION }));
        } else {
          // Inside a batch the server reports the version once, for the batch: give each
          // response the version it read, as the unary call's response has it.
          entry.resolve({ ...value, version: response.version } as never);
        }
      }
    }
    batch.resolve({
      code: response.code,
      message: response.message,
      error,
      batchId: response.batchId,
      version: response.version,
      editAck: response.editAck,
      serverMicros: response.serverMicros,
      results: response.results,
      raycasts: response.raycasts,
      response,
    });
  }

  private failEntries(entries: Entry[], error: VoxcolError): void {
    for (const entry of entries) entry.reject(error);
  }

  private failQueued(error: VoxcolError): void {
    const queued = this.queue;
    this.queue = [];
    this.failEntries(queued, error);
  }

  private failPending(error: VoxcolError): void {
    const pending = [...this.pending];
    this.pending.clear();
    this.inFlightQueries = 0;
    for (const [batchId, batch] of pending) {
      this.failEntries(batch.entries, error);
      batch.resolve(failedAnswer(batchId, error));
    }
  }
}

function failedAnswer(batchId: bigint, error: VoxcolError): BatchAnswer {
  return {
    code: error.code,
    message: error.details,
    error,
    batchId,
    version: 0n,
    editAck: undefined,
    serverMicros: 0,
    results: [],
    raycasts: undefined,
    response: undefined,
  };
}
