// Errors of the voxcol client: every failure is a VoxcolError carrying the gRPC status code.
import { Metadata, status as Status, type ServiceError } from "@grpc/grpc-js";

export { Status };

/** The name of a gRPC status code ("INVALID_ARGUMENT" for 3), or "CODE_<n>" for an unknown one. */
export function statusName(code: number): string {
  const name = (Status as unknown as Record<number, string | undefined>)[code];
  return typeof name === "string" ? name : `CODE_${code}`;
}

/**
 * A call, a query, a batch or a stream ended with a non-OK gRPC status. `code` is the status code
 * (`Status.INVALID_ARGUMENT`, ...), `details` the server's (or the client's) message, which for
 * bad input names the field.
 */
export class VoxcolError extends Error {
  readonly code: Status;
  readonly details: string;
  /** The trailing metadata of the call, when the error came from the server. */
  readonly metadata: Metadata | undefined;

  constructor(code: Status, details: string, options?: { operation?: string; metadata?: Metadata; cause?: unknown }) {
    const where = options?.operation !== undefined ? `${options.operation}: ` : "";
    super(`${where}${statusName(code)}: ${details}`, options?.cause !== undefined ? { cause: options.cause } : undefined);
    this.name = "VoxcolError";
    this.code = code;
    this.details = details;
    this.metadata = options?.metadata;
  }

  /** The name of `code`, e.g. "DEADLINE_EXCEEDED". */
  get codeName(): string {
    return statusName(this.code);
  }
}

/**
 * An argument the client cannot send: a wrong type, an unknown field, two members of one oneof.
 * Raised before anything is sent; `code` is INVALID_ARGUMENT and the message names the field.
 */
export class VoxcolArgumentError extends VoxcolError {
  constructor(details: string, operation?: string) {
    super(Status.INVALID_ARGUMENT, details, operation !== undefined ? { operation } : undefined);
    this.name = "VoxcolArgumentError";
  }
}

/** The client (or the batcher, subscription or edit session) was closed before or during the call. */
export class ClientClosedError extends VoxcolError {
  constructor(what: string, operation?: string) {
    super(Status.CANCELLED, `${what} is closed`, operation !== undefined ? { operation } : undefined);
    this.name = "ClientClosedError";
  }
}

function isServiceError(error: unknown): error is ServiceError {
  return error instanceof Error && typeof (error as Partial<ServiceError>).code === "number" && "details" in error;
}

/** Converts what grpc-js reports for a failed call into a VoxcolError. */
export function toVoxcolError(error: unknown, operation: string, target?: string): VoxcolError {
  if (error instanceof VoxcolError) return error;
  if (isServiceError(error)) {
    let details = error.details;
    if (error.code === Status.UNAVAILABLE && target !== undefined && !details.includes(target)) {
      details = `server ${target} unreachable: ${details}`;
    }
    return new VoxcolError(error.code, details, { operation, metadata: error.metadata, cause: error });
  }
  const message = error instanceof Error ? error.message : String(error);
  return new VoxcolError(Status.INTERNAL, message, { operation, cause: error });
}
