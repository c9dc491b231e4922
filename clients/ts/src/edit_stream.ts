// Edit batches on one EditService.EditStream with many in flight: each send() resolves with its
// batch's EditAck, in send order; a broken stream is reopened and the unacknowledged batches are
// resent with their idempotency keys, so none is applied twice.
import { randomUUID } from "node:crypto";

import type { ClientDuplexStream, StatusObject } from "@grpc/grpc-js";

import type { VoxcolClient } from "./client";
import { ClientClosedError, Status, VoxcolArgumentError, VoxcolError } from "./errors";
import type { ApplyEditsRequest, EditAck, EditStreamRequest, EditStreamResponse } from "./gen/voxcol/v1/edit_service";
import type { Init } from "./schema";

export interface EditStreamSessionOptions {
  /** Prefix of the idempotency keys of batches sent without one (unique per session). Default: a random UUID. */
  keyPrefix?: string;
  /** The world of every batch (default: the client's). */
  world?: string;
  /** Delay before reopening a broken stream, doubled per failed attempt. Default 100. */
  reconnectBackoffMs?: number;
  /** Default 5000. */
  maxReconnectBackoffMs?: number;
  /** Reopen attempts in a row before the unacknowledged batches fail. Default 10. */
  maxReconnectAttempts?: number;
}

const OPERATION = "EditService.EditStream";

interface Sent {
  request: EditStreamRequest;
  resolve: (ack: EditAck) => void;
  reject: (error: VoxcolError) => void;
}

/** Many edit batches in flight on one EditStream (VoxcolClient.editSession()). */
export class EditStreamSession {
  private readonly client: VoxcolClient;
  private readonly keyPrefix: string;
  private readonly world: string;
  private readonly initialBackoffMs: number;
  private readonly maxBackoffMs: number;
  private readonly maxAttempts: number;
  private readonly untrack: () => void;
  private readonly unacked: Sent[] = [];
  private call: ClientDuplexStream<EditStreamRequest, EditStreamResponse> | undefined;
  private nextBatchId = 1n;
  private attempts = 0;
  private retryTimer: NodeJS.Timeout | undefined;
  private closing: (() => void) | undefined;
  private closed = false;

  /** Use VoxcolClient.editSession(). */
  constructor(client: VoxcolClient, options: EditStreamSessionOptions = {}) {
    if (options.keyPrefix !== undefined && (typeof options.keyPrefix !== "string" || options.keyPrefix.length > 100)) {
      throw new VoxcolArgumentError("editSession options.keyPrefix must be a string of at most 100 bytes");
    }
    this.client = client;
    this.keyPrefix = options.keyPrefix ?? `${randomUUID()}-`;
    this.world = options.world ?? client.world;
    this.initialBackoffMs = options.reconnectBackoffMs ?? 100;
    this.maxBackoffMs = options.maxReconnectBackoffMs ?? 5000;
    this.maxAttempts = options.maxReconnectAttempts ?? 10;
    this.untrack = client.track(this);
  }

  /** Batches sent and not acknowledged yet. */
  get unacknowledged(): number {
    return this.unacked.length;
  }

  /**
   * Sends one batch (exactly ApplyEdits' options). Resolves with its EditAck once durable
   * (`replayed` when a resend found it applied); rejects with the batch's error (the stream goes
   * on) or, after the reconnect attempts ran out, the stream's.
   */
  send(edits: Init<ApplyEditsRequest>): Promise<EditAck> {
    let normalized: ApplyEditsRequest;
    try {
      if (this.closed) throw new ClientClosedError("edit session", "send");
      this.client.throwIfClosed("send");
      normalized = this.client.prepare<ApplyEditsRequest>("ApplyEditsRequest", edits, "editSession.send");
    } catch (error) {
      return Promise.reject(error);
    }
    const batchId = this.nextBatchId++;
    if (normalized.idempotencyKey === "") normalized.idempotencyKey = `${this.keyPrefix}${batchId}`;
    normalized.world = "";
    const request: EditStreamRequest = { batchId, edits: normalized, world: this.world };
    return new Promise<EditAck>((resolve, reject) => {
      this.unacked.push({ request, resolve, reject });
      if (this.call === undefined && this.retryTimer === undefined) this.open();
      else if (this.call !== undefined) this.call.write(request);
    });
  }

  /** Half-closes the stream after the unacknowledged batches are answered. */
  async close(): Promise<void> {
    if (this.closed) return;
    this.closed = true;
    if (this.unacked.length > 0) await new Promise<void>((resolve) => (this.closing = resolve));
    this.call?.end();
    this.call = undefined;
    this.untrack();
  }

  /** Cancels the stream; unacknowledged batches reject with `reason` (they may or may not have applied). */
  cancel(reason: VoxcolError = new ClientClosedError("edit session")): void {
    this.closed = true;
    this.untrack();
    if (this.retryTimer !== undefined) clearTimeout(this.retryTimer);
    this.retryTimer = undefined;
    const call = this.call;
    this.call = undefined;
    call?.cancel();
    this.failAll(reason);
  }

  private open(): void {
    let call: ClientDuplexStream<EditStreamRequest, EditStreamResponse>;
    try {
      call = this.client.openEditStream();
    } catch (error) {
      this.failAll(error instanceof VoxcolError ? error : new VoxcolError(Status.INTERNAL, String(error)));
      return;
    }
    this.call = call;
    call.on("data", (response: EditStreamResponse) => this.deliver(response));
    call.on("error", () => {
      // Handled through "status".
    });
    call.on("status", (status: StatusObject) => this.onStatus(call, status));
    for (const sent of this.unacked) call.write(sent.request);
  }

  private deliver(response: EditStreamResponse): void {
    const sent = this.unacked.shift();
    if (sent === undefined) return;
    this.attempts = 0;
    if (response.ack !== undefined) {
      this.client.raiseFloor(response.ack.version, this.world);
      sent.resolve(response.ack);
    } else {
      const error = response.error;
      sent.reject(new VoxcolError(error?.code ?? Status.UNKNOWN, error?.message ?? "batch answered without ack or error", { operation: OPERATION }));
    }
    if (this.unacked.length === 0 && this.closing !== undefined) this.closing();
  }

  private onStatus(call: ClientDuplexStream<EditStreamRequest, EditStreamResponse>, status: StatusObject): void {
    if (this.call !== call) return;
    this.call = undefined;
    if (this.unacked.length === 0) return;
    const error = new VoxcolError(
      status.code === Status.OK ? Status.UNAVAILABLE : status.code,
      status.code === Status.OK ? "edit stream ended before every batch was answered" : status.details,
      { operation: OPERATION, metadata: status.metadata },
    );
    const retryable = status.code === Status.UNAVAILABLE || status.code === Status.OK;
    if (!retryable || this.attempts >= this.maxAttempts || this.client.isClosed) {
      this.failAll(error);
      return;
    }
    const delay = Math.min(this.initialBackoffMs * 2 ** this.attempts, this.maxBackoffMs);
    this.attempts++;
    this.retryTimer = setTimeout(() => {
      this.retryTimer = undefined;
      if (!this.client.isClosed && this.unacked.length > 0) this.open();
    }, delay);
  }

  private failAll(error: VoxcolError): void {
    const failed = this.unacked.splice(0);
    for (const sent of failed) sent.reject(error);
    this.closing?.();
  }
}
