// @voxcol/client: a typed, Promise-based Node.js client for the voxcol collision service.
export { VoxcolClient, connect } from "./client";
export type { CallOptions, ClientOptions, ConnectOptions, TlsOptions } from "./client";
export { QueryBatcher } from "./batcher";
export type { BatchAnswer, FlushOptions, QueryBatcherOptions, TickOptions } from "./batcher";
export { Subscription } from "./subscription";
export type { SubscribeOptions } from "./subscription";
export { EditStreamSession } from "./edit_stream";
export type { EditStreamSessionOptions } from "./edit_stream";
export { ClientClosedError, Status, VoxcolArgumentError, VoxcolError, statusName } from "./errors";
export { messageFromJson, messageToJson, normalize } from "./schema";
export type { Init } from "./schema";

// The generated voxcol.v1 messages, enums and @grpc/grpc-js service definitions.
export * from "./gen/voxcol/v1/types";
export * from "./gen/voxcol/v1/body_service";
export * from "./gen/voxcol/v1/query_service";
export * from "./gen/voxcol/v1/edit_service";
export * from "./gen/voxcol/v1/world_service";
export * from "./gen/voxcol/v1/admin_service";
export * from "./gen/voxcol/v1/replica_service";
