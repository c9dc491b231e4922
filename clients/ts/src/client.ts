// The voxcol client: one channel to a server, one Promise-returning method per RPC of the
// WorldService, QueryService, EditService, AdminService and ReplicaService, read-your-writes
// floors per world, and the streams (Query batches, Subscribe, EditStream).
import {
  Client as GrpcClient,
  Metadata,
  credentials as grpcCredentials,
  type CallOptions as GrpcCallOptions,
  type ChannelCredentials,
  type ChannelOptions,
  type ClientDuplexStream,
  type ClientUnaryCall,
  type ServiceError,
} from "@grpc/grpc-js";

import { ClientClosedError, Status, VoxcolArgumentError, VoxcolError, toVoxcolError } from "./errors";
import { HealthCheckResponse_ServingStatus, HealthService } from "./gen/grpc/health/v1/health";
import { AdminServiceService } from "./gen/voxcol/v1/admin_service";
import type {
  CreateCheckpointRequest,
  CreateCheckpointResponse,
  ExportRegionRequest,
  ExportRegionResponse,
  ImportRegionRequest,
} from "./gen/voxcol/v1/admin_service";
import { EditServiceService } from "./gen/voxcol/v1/edit_service";
import type {
  ApplyEditsRequest,
  EditAck,
  EditStreamRequest,
  EditStreamResponse,
  FillBallRequest,
  ReadVoxelsRequest,
  ReadVoxelsResponse,
  SubscribeRequest,
  WriteVoxelsRequest,
} from "./gen/voxcol/v1/edit_service";
import { QueryServiceService } from "./gen/voxcol/v1/query_service";
import type {
  ContactsRequest,
  ContactsResponse,
  FindPathRequest,
  FindPathResponse,
  GetNavMeshRequest,
  GetNavMeshResponse,
  MoveCharactersRequest,
  MoveCharactersResponse,
  OverlapRequest,
  OverlapResponse,
  ProbeRequest,
  ProbeResponse,
  QueryBatchRequest,
  QueryBatchResponse,
  RaycastRequest,
  RaycastResponse,
  SweepRequest,
  SweepResponse,
  ValidateHitRequest,
  ValidateHitResponse,
  WatchPathsRequest,
  WatchPathsResponse,
} from "./gen/voxcol/v1/query_service";
import { BodyServiceService } from "./gen/voxcol/v1/body_service";
import type {
  ListBodiesRequest,
  ListBodiesResponse,
  UpdateBodiesRequest,
  UpdateBodiesResponse,
} from "./gen/voxcol/v1/body_service";
import { ReplicaServiceService } from "./gen/voxcol/v1/replica_service";
import type { GetReplicaStatusRequest, GetReplicaStatusResponse } from "./gen/voxcol/v1/replica_service";
import { WorldServiceService } from "./gen/voxcol/v1/world_service";
import type {
  CreateWorldRequest,
  DeleteWorldRequest,
  DeleteWorldResponse,
  GetWorldInfoRequest,
  GetWorldInfoResponse,
  ListWorldsRequest,
  ListWorldsResponse,
  WorldSummary,
} from "./gen/voxcol/v1/world_service";
import { QueryBatcher, type QueryBatcherOptions } from "./batcher";
import { EditStreamSession, type EditStreamSessionOptions } from "./edit_stream";
import { messageDescriptor, normalize, type Init } from "./schema";
import { Subscription, type SubscribeOptions } from "./subscription";

/** TLS settings. PEM text or bytes; without `ca` the server is verified against the system roots. */
export interface TlsOptions {
  /** CA certificate(s) that sign the server's certificate. Default: Node's system roots. */
  ca?: string | Uint8Array;
  /** Client certificate and key for mutual TLS (both or neither). */
  cert?: string | Uint8Array;
  key?: string | Uint8Array;
  /** The name expected in the server certificate; default: the target's host. */
  serverName?: string;
}

export interface ClientOptions {
  /**
   * The world every request that names none is about (requests with an empty `world` field get
   * it). Default: the server's default world.
   */
  world?: string;
  /** TLS: `true` for the system roots, or the CA and client certificate. Default: plaintext. */
  tls?: boolean | TlsOptions;
  /** Bearer token sent as `authorization: Bearer <token>` on every call. */
  token?: string;
  /** Deadline of every unary call in milliseconds, unless the call gives its own. Default 10000. */
  timeoutMs?: number;
  /** Extra channel options for @grpc/grpc-js (message sizes are unlimited by default). */
  channelOptions?: ChannelOptions;
}

export interface ConnectOptions extends ClientOptions {
  /** How long connect() waits for the server's first answer, in milliseconds. Default: timeoutMs. */
  connectTimeoutMs?: number;
}

/** Per-call settings of a unary call. */
export interface CallOptions {
  /** This call's deadline in milliseconds from now (default: the client's timeoutMs). */
  timeoutMs?: number;
  /** Cancels the call (the promise rejects with CANCELLED). */
  signal?: AbortSignal;
}

/** A generated @grpc/grpc-js method definition. */
interface MethodDefinition<Req, Res> {
  path: string;
  requestSerialize: (value: Req) => Buffer;
  responseDeserialize: (value: Buffer) => Res;
}

const DEFAULT_TIMEOUT_MS = 10_000;
const DEFAULT_WORLD = "default";

/** Request types whose `world` field names the world to act on, not a default to fill in. */
const WORLD_IS_SUBJECT = new Set(["voxcol.v1.CreateWorldRequest", "voxcol.v1.DeleteWorldRequest"]);
const hasWorldField = new Map<string, boolean>();

function requestHasWorld(typeName: string): boolean {
  let has = hasWorldField.get(typeName);
  if (has === undefined) {
    has = !WORLD_IS_SUBJECT.has(typeName) && messageDescriptor(typeName).fields.some((f) => f.localName === "world");
    hasWorldField.set(typeName, has);
  }
  return has;
}

function pem(value: string | Uint8Array | undefined, what: string): Buffer | null {
  if (value === undefined) return null;
  if (typeof value === "string") return Buffer.from(value);
  if (value instanceof Uint8Array) return Buffer.from(value);
  throw new VoxcolArgumentError(`options.tls.${what} must be PEM text (a string) or bytes, got ${typeof value}`);
}

function positiveMs(value: unknown, what: string): number | undefined {
  if (value === undefined) return undefined;
  if (typeof value !== "number" || !Number.isFinite(value) || value <= 0) {
    throw new VoxcolArgumentError(`${what} must be a positive number of milliseconds, got ${String(value)}`);
  }
  return value;
}

/**
 * A connection to one voxcol server. Every method returns a Promise that rejects with a
 * VoxcolError (the gRPC code and the server's message). Edits acknowledged through this client
 * raise its read-your-writes floor of their world; the batchers it makes pass that floor as
 * `minVersion`. close() cancels what is in flight and frees the channel.
 */
export class VoxcolClient {
  readonly target: string;
  readonly world: string;
  readonly timeoutMs: number;
  private readonly grpc: GrpcClient;
  private readonly token: string | undefined;
  private readonly floors = new Map<string, bigint>();
  private readonly calls = new Set<{ cancel(): void }>();
  private readonly closeables = new Set<{ cancel(reason: VoxcolError): void }>();
  private closed = false;

  constructor(target: string, options: ClientOptions = {}) {
    if (typeof target !== "string" || target.length === 0) {
      throw new VoxcolArgumentError(`target must be a non-empty "host:port" string, got ${JSON.stringify(target)}`);
    }
    if (typeof options !== "object" || options === null) {
      throw new VoxcolArgumentError("options must be an object");
    }
    if (options.world !== undefined && typeof options.world !== "string") {
      throw new VoxcolArgumentError(`options.world must be a string, got ${typeof options.world}`);
    }
    if (options.token !== undefined && (typeof options.token !== "string" || options.token.length === 0)) {
      throw new VoxcolArgumentError("options.token must be a non-empty string");
    }
    this.target = target;
    this.world = options.world ?? "";
    this.timeoutMs = positiveMs(options.timeoutMs, "options.timeoutMs") ?? DEFAULT_TIMEOUT_MS;
    this.token = options.token;

    const channelOptions: ChannelOptions = {
      "grpc.max_receive_message_length": -1,
      "grpc.max_send_message_length": -1,
      ...options.channelOptions,
    };
    let creds: ChannelCredentials;
    if (options.tls !== undefined && options.tls !== false) {
      const tls: TlsOptions = options.tls === true ? {} : options.tls;
      if (typeof tls !== "object" || tls === null) {
        throw new VoxcolArgumentError("options.tls must be true, false or { ca, cert, key, serverName }");
      }
      const cert = pem(tls.cert, "cert");
      const key = pem(tls.key, "key");
      if ((cert === null) !== (key === null)) {
        throw new VoxcolArgumentError("options.tls.cert and options.tls.key go together (mutual TLS)");
      }
      creds = grpcCredentials.createSsl(pem(tls.ca, "ca"), key, cert);
      if (tls.serverName !== undefined) {
        channelOptions["grpc.ssl_target_name_override"] = tls.serverName;
        channelOptions["grpc.default_authority"] = tls.serverName;
      }
    } else {
      creds = grpcCredentials.createInsecure();
    }
    this.grpc = new GrpcClient(target, creds, channelOptions);
  }

  // ---- read-your-writes --------------------------------------------------------------------

  /** The world key of a request's `world` value ("" = this client's world, then "default"). */
  worldKey(world?: string): string {
    const name = world !== undefined && world !== "" ? world : this.world;
    return name === "" ? DEFAULT_WORLD : name;
  }

  /** The version of the newest edit acknowledged through this client in `world` (0n: none). */
  readFloor(world?: string): bigint {
    return this.floors.get(this.worldKey(world)) ?? 0n;
  }

  /** Raises the floor of `world` to `version` (e.g. one another process reported). */
  raiseFloor(version: bigint | number, world?: string): void {
    const v = BigInt(version);
    const key = this.worldKey(world);
    if (v > (this.floors.get(key) ?? 0n)) this.floors.set(key, v);
  }

  // ---- WorldService --------------------------------------------------------------------------

  getWorldInfo(request: Init<GetWorldInfoRequest> = {}, options?: CallOptions): Promise<GetWorldInfoResponse> {
    return this.unary(WorldServiceService.getWorldInfo, "GetWorldInfoRequest", request, options);
  }
  createWorld(request: Init<CreateWorldRequest>, options?: CallOptions): Promise<WorldSummary> {
    return this.unary(WorldServiceService.createWorld, "CreateWorldRequest", request, options);
  }
  async deleteWorld(request: Init<DeleteWorldRequest>, options?: CallOptions): Promise<DeleteWorldResponse> {
    const response = await this.unary(WorldServiceService.deleteWorld, "DeleteWorldRequest", request, options);
    // A world of the same id made later starts again at version 0.
    if (typeof request.world === "string" && request.world !== "") this.floors.delete(request.world);
    return response;
  }
  listWorlds(request: Init<ListWorldsRequest> = {}, options?: CallOptions): Promise<ListWorldsResponse> {
    return this.unary(WorldServiceService.listWorlds, "ListWorldsRequest", request, options);
  }

  // ---- QueryService (unary) ------------------------------------------------------------------

  raycast(request: Init<RaycastRequest>, options?: CallOptions): Promise<RaycastResponse> {
    return this.unary(QueryServiceService.raycast, "RaycastRequest", request, options);
  }
  sweep(request: Init<SweepRequest>, options?: CallOptions): Promise<SweepResponse> {
    return this.unary(QueryServiceService.sweep, "SweepRequest", request, options);
  }
  overlap(request: Init<OverlapRequest>, options?: CallOptions): Promise<OverlapResponse> {
    return this.unary(QueryServiceService.overlap, "OverlapRequest", request, options);
  }
  contacts(request: Init<ContactsRequest>, options?: CallOptions): Promise<ContactsResponse> {
    return this.unary(QueryServiceService.contacts, "ContactsRequest", request, options);
  }
  probe(request: Init<ProbeRequest>, options?: CallOptions): Promise<ProbeResponse> {
    return this.unary(QueryServiceService.probe, "ProbeRequest", request, options);
  }
  moveCharacters(request: Init<MoveCharactersRequest>, options?: CallOptions): Promise<MoveCharactersResponse> {
    return this.unary(QueryServiceService.moveCharacters, "MoveCharactersRequest", request, options);
  }
  validateHit(request: Init<ValidateHitRequest>, options?: CallOptions): Promise<ValidateHitResponse> {
    return this.unary(QueryServiceService.validateHit, "ValidateHitRequest", request, options);
  }
  /** The shortest walkable path of an agent profile (QueryService.FindPath); the path's own
   * outcome (OK, NO_PATH, START_OFF_MESH, ...) is the response's `status`. */
  findPath(request: Init<FindPathRequest>, options?: CallOptions): Promise<FindPathResponse> {
    return this.unary(QueryServiceService.findPath, "FindPathRequest", request, options);
  }

  // ---- EditService (unary) -------------------------------------------------------------------

  fillBall(request: Init<FillBallRequest>, options?: CallOptions): Promise<EditAck> {
    return this.edit(EditServiceService.fillBall, "FillBallRequest", request, options);
  }
  applyEdits(request: Init<ApplyEditsRequest>, options?: CallOptions): Promise<EditAck> {
    return this.edit(EditServiceService.applyEdits, "ApplyEditsRequest", request, options);
  }
  readVoxels(request: Init<ReadVoxelsRequest>, options?: CallOptions): Promise<ReadVoxelsResponse> {
    return this.unary(EditServiceService.readVoxels, "ReadVoxelsRequest", request, options);
  }
  writeVoxels(request: Init<WriteVoxelsRequest>, options?: CallOptions): Promise<EditAck> {
    return this.edit(EditServiceService.writeVoxels, "WriteVoxelsRequest", request, options);
  }

  // ---- AdminService --------------------------------------------------------------------------

  createCheckpoint(request: Init<CreateCheckpointRequest>, options?: CallOptions): Promise<CreateCheckpointResponse> {
    return this.unary(AdminServiceService.createCheckpoint, "CreateCheckpointRequest", request, options);
  }
  exportRegion(request: Init<ExportRegionRequest>, options?: CallOptions): Promise<ExportRegionResponse> {
    return this.unary(AdminServiceService.exportRegion, "ExportRegionRequest", request, options);
  }
  importRegion(request: Init<ImportRegionRequest>, options?: CallOptions): Promise<EditAck> {
    return this.edit(AdminServiceService.importRegion, "ImportRegionRequest", request, options);
  }

  // ---- BodyService ---------------------------------------------------------------------------

  /** One game tick's body changes, all or nothing (BodyService.UpdateBodies). Bodies are session
   * state: not stored, not replicated; a replica keeps the bodies sent to it. */
  updateBodies(request: Init<UpdateBodiesRequest>, options?: CallOptions): Promise<UpdateBodiesResponse> {
    return this.unary(BodyServiceService.updateBodies, "UpdateBodiesRequest", request, options);
  }
  /** The live bodies at the latest tick and the tick window (BodyService.ListBodies). */
  listBodies(request: Init<ListBodiesRequest> = {}, options?: CallOptions): Promise<ListBodiesResponse> {
    return this.unary(BodyServiceService.listBodies, "ListBodiesRequest", request, options);
  }

  // ---- ReplicaService ------------------------------------------------------------------------

  getReplicaStatus(request: Init<GetReplicaStatusRequest> = {}, options?: CallOptions): Promise<GetReplicaStatusResponse> {
    return this.unary(ReplicaServiceService.getReplicaStatus, "GetReplicaStatusRequest", request, options);
  }

  // ---- grpc.health.v1 ------------------------------------------------------------------------

  /** The server's health (grpc.health.v1.Health/Check): true when SERVING. */
  async checkHealth(options?: CallOptions): Promise<boolean> {
    const response = await this.call(HealthService.check, "grpc.health.v1.HealthCheckRequest", {}, "Health.Check", options);
    return response.status === HealthCheckResponse_ServingStatus.SERVING;
  }

  // ---- streams -------------------------------------------------------------------------------

  /**
   * A QueryBatcher on its own Query stream: queue queries during a tick and flush them as one
   * batch; each query's promise settles with its own result.
   */
  batcher(options: QueryBatcherOptions = {}): QueryBatcher {
    this.throwIfClosed("batcher");
    return new QueryBatcher(this, options);
  }

  /**
   * The change feed (EditService.Subscribe): an async iterable of SubscribeResponse; cancel()
   * ends it. With `resume`, a broken feed is reopened from the last version received.
   */
  subscribe(request: Init<SubscribeRequest> = {}, options: SubscribeOptions = {}): Subscription {
    this.throwIfClosed("subscribe");
    const normalized = this.prepare<SubscribeRequest>("SubscribeRequest", request, "EditService.Subscribe");
    return new Subscription(this, normalized, options);
  }

  /** Edit batches on one EditStream with many in flight, each acknowledged by its promise. */
  editSession(options: EditStreamSessionOptions = {}): EditStreamSession {
    this.throwIfClosed("editSession");
    return new EditStreamSession(this, options);
  }

  /** The navmesh polygons of a box's tiles, for drawing (QueryService.GetNavMesh). */
  getNavMesh(request: Init<GetNavMeshRequest>, options?: CallOptions): Promise<GetNavMeshResponse> {
    return this.unary(QueryServiceService.getNavMesh, "GetNavMeshRequest", request, options);
  }

  /**
   * The raw QueryService.WatchPaths call (path watching; typed; no deadline): write watch and
   * unwatch requests, read events (REGISTERED, BLOCKED, SHORTER, UNWATCHED, REFUSED); end()
   * half-closes and the server ends the call once the requests' events are written.
   */
  openWatchPaths(options: { signal?: AbortSignal } = {}): ClientDuplexStream<WatchPathsRequest, WatchPathsResponse> {
    return this.openDuplex(QueryServiceService.watchPaths, "QueryService.WatchPaths", options.signal);
  }

  /**
   * The raw EditService.EditStream call (typed; no deadline). Prefer editSession(), which keeps
   * order, idempotency keys and read-your-writes floors.
   */
  openEditStream(options: { signal?: AbortSignal } = {}): ClientDuplexStream<EditStreamRequest, EditStreamResponse> {
    return this.openDuplex(EditServiceService.editStream, "EditService.EditStream", options.signal);
  }

  /**
   * The raw QueryService.Query call (typed; no deadline). Prefer batcher(), which matches
   * answers to queries, applies read-your-writes floors and reconnects.
   */
  openQueryStream(options: { signal?: AbortSignal } = {}): ClientDuplexStream<QueryBatchRequest, QueryBatchResponse> {
    return this.openDuplex(QueryServiceService.query, "QueryService.Query", options.signal);
  }

  /** Whether close() was called. */
  get isClosed(): boolean {
    return this.closed;
  }

  /**
   * Cancels every call, batch, subscription and edit session in flight (they reject with
   * ClientClosedError) and closes the channel. Later calls reject with ClientClosedError.
   * To wait for a batcher's answers first, `await batcher.close()`.
   */
  close(): void {
    if (this.closed) return;
    this.closed = true;
    const reason = new ClientClosedError("voxcol client");
    for (const closeable of [...this.closeables]) closeable.cancel(reason);
    for (const call of [...this.calls]) call.cancel();
    this.grpc.close();
  }

  // ---- internals shared with the batcher, subscription and edit session --------------------

  /** @internal */
  throwIfClosed(operation: string): void {
    if (this.closed) throw new ClientClosedError("voxcol client", operation);
  }

  /** @internal Registers a stream owner to cancel on close(). */
  track(closeable: { cancel(reason: VoxcolError): void }): () => void {
    this.closeables.add(closeable);
    return () => this.closeables.delete(closeable);
  }

  /** @internal Checks and completes a request of type voxcol.v1.<type>, filling in the world. */
  prepare<T>(type: string, request: unknown, operation: string): T {
    const typeName = type.includes(".") ? type : `voxcol.v1.${type}`;
    let normalized: T;
    try {
      normalized = normalize<T>(typeName, request, "request");
    } catch (error) {
      if (error instanceof VoxcolArgumentError) throw new VoxcolArgumentError(error.details, operation);
      throw error;
    }
    if (this.world !== "" && requestHasWorld(typeName)) {
      const named = normalized as { world: string };
      if (named.world === "") named.world = this.world;
    }
    return normalized;
  }

  /** @internal Metadata of every call: the bearer token. */
  metadata(): Metadata {
    const metadata = new Metadata();
    if (this.token !== undefined) metadata.set("authorization", `Bearer ${this.token}`);
    return metadata;
  }

  /** @internal */
  openDuplex<Req, Res>(
    method: MethodDefinition<Req, Res> & { responseStream: true; requestStream: true },
    operation: string,
    signal?: AbortSignal,
  ): ClientDuplexStream<Req, Res> {
    this.throwIfClosed(operation);
    const definition = method as unknown as MethodDefinition<Req, Res> & { requestSerialize: (v: Req) => Buffer };
    const call = this.grpc.makeBidiStreamRequest(
      definition.path,
      definition.requestSerialize,
      definition.responseDeserialize,
      this.metadata(),
      {},
    );
    this.attach(call, signal);
    return call;
  }

  /** @internal */
  openServerStream<Req, Res>(method: MethodDefinition<Req, Res>, request: Req, signal?: AbortSignal) {
    const call = this.grpc.makeServerStreamRequest(
      method.path,
      method.requestSerialize,
      method.responseDeserialize,
      request,
      this.metadata(),
      {},
    );
    this.attach(call, signal);
    return call;
  }

  private attach(call: { cancel(): void; on(event: "status", listener: () => void): unknown }, signal?: AbortSignal): void {
    this.calls.add(call);
    call.on("status", () => this.calls.delete(call));
    if (signal !== undefined) {
      if (signal.aborted) call.cancel();
      else signal.addEventListener("abort", () => call.cancel(), { once: true });
    }
  }

  private async edit<Req>(method: MethodDefinition<Req, EditAck>, type: string, request: unknown, options?: CallOptions): Promise<EditAck> {
    const ack = await this.unary(method, type, request, options, (normalized) => {
      const world = (normalized as { world?: string }).world;
      return world;
    });
    return ack;
  }

  private unary<Req, Res>(
    method: MethodDefinition<Req, Res>,
    type: string,
    request: unknown,
    options: CallOptions | undefined,
    editWorld?: (normalized: Req) => string | undefined,
  ): Promise<Res> {
    const operation = method.path.slice("/voxcol.v1.".length).replace("/", ".");
    return this.call(method, `voxcol.v1.${type}`, request, operation, options, editWorld);
  }

  private call<Req, Res>(
    method: MethodDefinition<Req, Res>,
    typeName: string,
    request: unknown,
    operation: string,
    options: CallOptions | undefined,
    editWorld?: (normalized: Req) => string | undefined,
  ): Promise<Res> {
    return new Promise<Res>((resolve, reject) => {
      if (this.closed) {
        reject(new ClientClosedError("voxcol client", operation));
        return;
      }
      let normalized: Req;
      let timeoutMs: number;
      try {
        if (options !== undefined && (typeof options !== "object" || options === null)) {
          throw new VoxcolArgumentError("options must be an object", operation);
        }
        timeoutMs = positiveMs(options?.timeoutMs, "options.timeoutMs") ?? this.timeoutMs;
        normalized = this.prepare<Req>(typeName, request, operation);
      } catch (error) {
        reject(error instanceof VoxcolError ? error : toVoxcolError(error, operation));
        return;
      }
      const callOptions: GrpcCallOptions = { deadline: new Date(Date.now() + timeoutMs) };
      const call: ClientUnaryCall = this.grpc.makeUnaryRequest(
        method.path,
        method.requestSerialize,
        method.responseDeserialize,
        normalized,
        this.metadata(),
        callOptions,
        (error: ServiceError | null, response?: Res) => {
          this.calls.delete(call);
          if (error !== null || response === undefined) {
            if (this.closed && error?.code === Status.CANCELLED) {
              reject(new ClientClosedError("voxcol client", operation));
            } else {
              reject(toVoxcolError(error ?? new Error("no response"), operation, this.target));
            }
            return;
          }
          if (editWorld !== undefined) {
            this.raiseFloor((response as unknown as EditAck).version, editWorld(normalized));
          }
          resolve(response);
        },
      );
      this.calls.add(call);
      const signal = options?.signal;
      if (signal !== undefined) {
        if (signal.aborted) call.cancel();
        else signal.addEventListener("abort", () => call.cancel(), { once: true });
      }
    });
  }
}

/**
 * Connects to a voxcol server and checks that it answers (GetWorldInfo of the client's world),
 * so a wrong address, certificate, token or world fails here with a VoxcolError.
 */
export async function connect(target: string, options: ConnectOptions = {}): Promise<VoxcolClient> {
  const client = new VoxcolClient(target, options);
  try {
    const timeoutMs = positiveMs(options.connectTimeoutMs, "options.connectTimeoutMs") ?? client.timeoutMs;
    await client.getWorldInfo({}, { timeoutMs });
  } catch (error) {
    client.close();
    if (error instanceof VoxcolError) {
      throw new VoxcolError(error.code, error.details, {
        operation: `connect ${target}`,
        ...(error.metadata !== undefined ? { metadata: error.metadata } : {}),
        cause: error,
      });
    }
    throw error;
  }
  return client;
}
