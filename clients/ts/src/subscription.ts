// The change feed (EditService.Subscribe) as an async iterable, optionally resumed after a
// broken stream from the last version received.
import type { ClientReadableStream, StatusObject } from "@grpc/grpc-js";

import type { VoxcolClient } from "./client";
import { ClientClosedError, Status, VoxcolError } from "./errors";
import { EditServiceService, type SubscribeRequest, type SubscribeResponse } from "./gen/voxcol/v1/edit_service";

export interface SubscribeOptions {
  /** Ends the subscription (the iteration finishes without an error). */
  signal?: AbortSignal;
  /**
   * Reopen the feed after it broke with UNAVAILABLE (e.g. a server restart) from the version of
   * the last response received (or the request's fromVersion), waiting initialBackoffMs, doubled
   * per failed attempt up to maxBackoffMs, at most maxAttempts times in a row. Default: off.
   */
  resume?: boolean | { initialBackoffMs?: number; maxBackoffMs?: number; maxAttempts?: number };
}

const OPERATION = "EditService.Subscribe";
const HIGH_WATER = 256;

/**
 * One Subscribe feed. Iterate it (`for await (const change of subscription)`) or call next();
 * cancel() ends it. The iteration throws a VoxcolError when the feed fails (OUT_OF_RANGE for a
 * fromVersion outside the server's window, RESOURCE_EXHAUSTED for a reader too slow, ...).
 */
export class Subscription implements AsyncIterableIterator<SubscribeResponse> {
  private readonly client: VoxcolClient;
  private readonly request: SubscribeRequest;
  private readonly resume: { initialBackoffMs: number; maxBackoffMs: number; maxAttempts: number } | undefined;
  private readonly untrack: () => void;
  private call: ClientReadableStream<SubscribeResponse> | undefined;
  private readonly buffer: SubscribeResponse[] = [];
  private waiter: { resolve: (r: IteratorResult<SubscribeResponse>) => void; reject: (e: unknown) => void } | undefined;
  private failure: VoxcolError | undefined;
  private ended = false;
  private lastVersion: bigint | undefined;
  private attempts = 0;
  private retryTimer: NodeJS.Timeout | undefined;

  /** Use VoxcolClient.subscribe(). */
  constructor(client: VoxcolClient, request: SubscribeRequest, options: SubscribeOptions) {
    this.client = client;
    this.request = request;
    const resume = options.resume;
    this.resume =
      resume === undefined || resume === false
        ? undefined
        : {
            initialBackoffMs: (resume === true ? undefined : resume.initialBackoffMs) ?? 100,
            maxBackoffMs: (resume === true ? undefined : resume.maxBackoffMs) ?? 5000,
            maxAttempts: (resume === true ? undefined : resume.maxAttempts) ?? 20,
          };
    this.untrack = client.track(this);
    if (options.signal !== undefined) {
      if (options.signal.aborted) this.end();
      else options.signal.addEventListener("abort", () => this.cancel(), { once: true });
    }
    if (!this.ended) this.open(request.fromVersion);
  }

  /** The version of the last response received (undefined: none yet). */
  get version(): bigint | undefined {
    return this.lastVersion;
  }

  next(): Promise<IteratorResult<SubscribeResponse>> {
    const value = this.buffer.shift();
    if (value !== undefined) {
      if (this.buffer.length < HIGH_WATER / 2) this.call?.resume();
      return Promise.resolve({ value, done: false });
    }
    if (this.failure !== undefined) {
      const failure = this.failure;
      this.failure = undefined;
      this.ended = true;
      return Promise.reject(failure);
    }
    if (this.ended) return Promise.resolve({ value: undefined, done: true });
    if (this.waiter !== undefined) return Promise.reject(new Error("Subscription.next() called before the previous call settled"));
    return new Promise((resolve, reject) => (this.waiter = { resolve, reject }));
  }

  /** Ending a for-await loop early cancels the feed. */
  return(): Promise<IteratorResult<SubscribeResponse>> {
    this.cancel();
    return Promise.resolve({ value: undefined, done: true });
  }

  [Symbol.asyncIterator](): this {
    return this;
  }

  /** Ends the feed: a pending next() resolves as done, later ones too. */
  cancel(reason?: VoxcolError): void {
    if (this.ended && this.call === undefined) return;
    const call = this.call;
    this.call = undefined;
    call?.cancel();
    if (reason instanceof ClientClosedError) this.fail(reason);
    else this.end();
  }

  private open(fromVersion: bigint | undefined): void {
    const request: SubscribeRequest = { ...this.request, fromVersion };
    let call: ClientReadableStream<SubscribeResponse>;
    try {
      call = this.client.openServerStream(EditServiceService.subscribe, request);
    } catch (error) {
      this.fail(error instanceof VoxcolError ? error : new VoxcolError(Status.INTERNAL, String(error), { operation: OPERATION }));
      return;
    }
    this.call = call;
    call.on("data", (response: SubscribeResponse) => {
      this.attempts = 0;
      this.lastVersion = response.version;
      const waiter = this.waiter;
      if (waiter !== undefined) {
        this.waiter = undefined;
        waiter.resolve({ value: response, done: false });
        return;
      }
      this.buffer.push(response);
      if (this.buffer.length >= HIGH_WATER) call.pause();
    });
    call.on("error", () => {
      // Handled through "status".
    });
    call.on("status", (status: StatusObject) => {
      if (this.call !== call) return; // cancelled by us
      this.call = undefined;
      if (status.code === Status.OK) {
        this.end();
        return;
      }
      if (this.resume !== undefined && status.code === Status.UNAVAILABLE && this.attempts < this.resume.maxAttempts) {
        const delay = Math.min(this.resume.initialBackoffMs * 2 ** this.attempts, this.resume.maxBackoffMs);
        this.attempts++;
        this.retryTimer = setTimeout(() => {
          this.retryTimer = undefined;
          if (!this.ended && !this.client.isClosed) this.open(this.lastVersion ?? this.request.fromVersion);
        }, delay);
        return;
      }
      this.fail(new VoxcolError(status.code, status.details, { operation: OPERATION, metadata: status.metadata }));
    });
  }

  private end(): void {
    this.finish();
    const waiter = this.waiter;
    this.waiter = undefined;
    waiter?.resolve({ value: undefined, done: true });
  }

  private fail(error: VoxcolError): void {
    this.finish();
    const waiter = this.waiter;
    this.waiter = undefined;
    if (waiter !== undefined) {
      this.ended = true;
      waiter.reject(error);
    } else {
      this.failure = error;
    }
  }

  private finish(): void {
    if (this.retryTimer !== undefined) clearTimeout(this.retryTimer);
    this.retryTimer = undefined;
    if (!this.ended) {
      this.ended = true;
      this.untrack();
    }
  }
}
