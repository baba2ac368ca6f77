/**
 * Where a streaming method's events go (docs/guides/streaming.md). The runtime opens
 * the sink when it admits the call (the breaker let it through and it holds its
 * concurrency slot), and `ctx.emit` writes to it; the gateway owns the wire format.
 */
export interface StreamSink {
  /** Sends the stream's headers: called once, when the call is admitted. */
  open(): void;
  /**
   * `ctx.emit(value)`: resolves once the event is written and the connection can take
   * more (backpressure), rejects once the call has ended.
   */
  emit(value: unknown): Promise<void>;
  /** Several events already serialised to JSON text (an isolated method's), written at once. */
  emitBatch(jsons: readonly string[]): Promise<void>;
}

const ignore = () => {};

/**
 * A rejected emit, marked as handled: a method that fires `ctx.emit` without awaiting it
 * must not take the process down with an unhandled rejection once its call has ended.
 * Whoever awaits the promise still gets the rejection.
 */
export function refusedEmit(reason: unknown): Promise<never> {
  const promise = Promise.reject(reason);
  promise.catch(ignore);
  return promise;
}

/** An emit that may reject later, marked as handled for the same reason. */
export function pendingEmit(executor: (resolve: () => void, reject: (reason: unknown) => void) => void): Promise<void> {
  const promise = new Promise<void>(executor);
  promise.catch(ignore);
  return promise;
}

/** Why an emit after the stream's terminal record rejects. */
export class StreamEndedError extends Error {
  constructor() {
    super("the stream has ended");
    this.name = "StreamEndedError";
  }
}

/** An event's JSON text; `undefined` (and anything JSON leaves out) is `null`. Throws a TypeError for what JSON cannot carry. */
export function serializeEvent(value: unknown): string {
  let json: string | undefined;
  try {
    json = JSON.stringify(value);
  } catch (error) {
    throw new TypeError(`ctx.emit: the event is not JSON-serialisable (${(error as Error).message})`);
  }
  return json ?? "null";
}

/** `ctx.emit` of a buffered method. */
export function notStreaming(): Promise<never> {
  return refusedEmit(new Error("ctx.emit works in streaming methods only (runtime.streaming: true)"));
}
