/**
 * `ctx.emit` of an isolated streaming method. The worker serialises each event (so a value
 * JSON cannot carry is refused in the worker, where the method can catch it) and sends the
 * JSON text to the main thread, which writes it to the stream.
 *
 * Events travel in batches under a window: `emit` resolves at once while less than
 * `WINDOW_CHARS` of event text is unacknowledged, and the events of one turn of the
 * worker's event loop go out as one message, acknowledged once written and drained. A
 * round trip per event cost about 20 µs of CPU against 1.3 µs for an inline method's event
 * (bench/stream.mjs); batching brings it close to the inline cost, while a reader that
 * stops still holds the method once the window is full, as it holds an inline one at its
 * next emit. Once the call has ended the main thread says so, and every later `emit` rejects
 * (until that word arrives, up to a window of emits may still resolve).
 *
 * The same window carries the bytes of a file an isolated method answers with a stream
 * (src/runtime/isolated-file.ts): `sendOverPort` and `relayBatches` are that mechanism,
 * for any item with a size.
 */
import type { MessagePort } from "node:worker_threads";
import { pendingEmit, refusedEmit, serializeEvent, StreamEndedError, type StreamSink } from "./stream-sink.js";

/** Event text the worker may have written ahead of the socket. */
const WINDOW_CHARS = 64 * 1024;

interface Batch<T> {
  items: T[];
}

interface BatchReply {
  /** Set when the batch was refused because the call ended; the worker rejects with an Error like it. */
  refused?: { name: string; message: string };
}

/** Main thread: writes the worker's batches to `sink` until the port closes, acknowledging each. */
export function relayEmits(port: MessagePort, sink: StreamSink): void {
  relayBatches<string>(port, (events) => sink.emitBatch(events));
}

/**
 * Main thread: hands each batch to `write` and acknowledges it once `write` resolves (the
 * worker may then send more), or refuses it with `write`'s error. Any other message goes
 * to `other`.
 */
export function relayBatches<T>(port: MessagePort, write: (items: T[]) => Promise<void>, other?: (message: unknown) => void): void {
  port.on("message", (message: Batch<T> | unknown) => {
    const items = (message as Partial<Batch<T>> | null)?.items;
    if (!Array.isArray(items)) return other?.(message);
    write(items).then(
      () => port.postMessage({} satisfies BatchReply),
      (error: unknown) => refuseOverPort(port, error),
    );
  });
}

/** Main thread: every later send of the worker's rejects with an Error like `error`. */
export function refuseOverPort(port: MessagePort, error: unknown): void {
  const { name, message } = error instanceof Error ? error : new Error(String(error));
  port.postMessage({ refused: { name, message } } satisfies BatchReply);
}

export interface WorkerEmitter {
  /** The call's `ctx.emit`. */
  emit(value: unknown): Promise<void>;
  /** Sends what is queued and resolves once every event is written (or the call ended): before the method's outcome goes back. */
  settle(): Promise<void>;
  /** The call is over: every later `emit` rejects, as an inline method's does. */
  close(): void;
}

/** Worker: the emitter of one call. */
export function emitOverPort(port: MessagePort): WorkerEmitter {
  const sender = sendOverPort<string>(port, WINDOW_CHARS, (json) => json.length);
  return {
    emit(value) {
      let json: string;
      try {
        json = serializeEvent(value);
      } catch (error) {
        return refusedEmit(error);
      }
      return sender.send(json);
    },
    settle: () => sender.settle(),
    close: () => sender.close(),
  };
}

export interface WorkerSender<T> {
  /** Resolves at once while the window has room, else once the main thread caught up; rejects once refused. */
  send(item: T): Promise<void>;
  /** Sends what is queued and resolves once every item is acknowledged (or refused). */
  settle(): Promise<void>;
  /** Every later `send` rejects. */
  close(): void;
}

/** Worker: items sent in batches, one per turn of the event loop, under a window of `window` (counted by `sizeOf`). */
export function sendOverPort<T>(port: MessagePort, window: number, sizeOf: (item: T) => number): WorkerSender<T> {
  let queued: T[] = [];
  let queuedSize = 0;
  /** The size of each batch sent and not yet acknowledged, oldest first. */
  const inFlight: number[] = [];
  let unacked = 0;
  let refused: unknown;
  let flushScheduled = false;
  /** Sends waiting for room in the window, and `settle` waiting for everything to be acknowledged. */
  let waiting: Array<{ resolve: () => void; reject: (reason: unknown) => void }> = [];
  let settled: Array<() => void> = [];

  const flush = () => {
    flushScheduled = false;
    if (queued.length === 0 || refused) return;
    port.postMessage({ items: queued } satisfies Batch<T>);
    inFlight.push(queuedSize);
    queued = [];
    queuedSize = 0;
  };
  const wakeSettled = () => {
    if (unacked > 0 && !refused) return;
    const done = settled;
    settled = [];
    for (const resolve of done) resolve();
  };

  const refuse = (reason: unknown) => {
    if (refused) return;
    refused = reason;
    const blocked = waiting;
    waiting = [];
    for (const waiter of blocked) waiter.reject(reason);
    wakeSettled();
  };

  port.on("message", (reply: BatchReply) => {
    if (reply.refused) {
      refuse(Object.assign(new Error(reply.refused.message), { name: reply.refused.name }));
      return;
    }
    unacked -= inFlight.shift() ?? 0;
    while (waiting.length > 0 && unacked <= window) waiting.shift()!.resolve();
    wakeSettled();
  });

  return {
    send(item) {
      if (refused) return refusedEmit(refused);
      const size = sizeOf(item);
      queued.push(item);
      queuedSize += size;
      unacked += size;
      if (!flushScheduled) {
        flushScheduled = true;
        setImmediate(flush);
      }
      if (unacked <= window) return Promise.resolve();
      return pendingEmit((resolve, reject) => waiting.push({ resolve, reject }));
    },
    settle() {
      flush();
      return new Promise<void>((resolve) => {
        settled.push(resolve);
        wakeSettled();
      });
    },
    close() {
      refuse(new StreamEndedError());
    },
  };
}
