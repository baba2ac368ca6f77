/**
 * `ctx.emit` of an isolated streaming method: the worker serialises each event (so a value
 * JSON cannot carry is refused in the worker, where the method can catch it) and posts its
 * text over a port of its own; the main thread writes it to the stream and answers once
 * the line is written and drained, or refused because the call ended. So backpressure and
 * the end of the call reach the worker just as they reach an inline method.
 */
import type { MessagePort } from "node:worker_threads";
import { pendingEmit, refusedEmit, type StreamSink } from "./stream-sink.js";

interface EmitMessage {
  id: number;
  json: string;
}

interface EmitReply {
  id: number;
  /** Set when the emit was refused; the worker rejects with an Error of this name and message. */
  refused?: { name: string; message: string };
}

/** Main thread: writes the worker's events to `sink` until the port closes. */
export function relayEmits(port: MessagePort, sink: StreamSink): void {
  port.on("message", ({ id, json }: EmitMessage) => {
    sink.emitJson(json).then(
      () => port.postMessage({ id } satisfies EmitReply),
      (error: unknown) => {
        const { name, message } = error instanceof Error ? error : new Error(String(error));
        port.postMessage({ id, refused: { name, message } } satisfies EmitReply);
      },
    );
  });
}

/** Worker: the `ctx.emit` of one call. */
export function emitOverPort(port: MessagePort): (value: unknown) => Promise<void> {
  const pending = new Map<number, { resolve: () => void; reject: (error: Error) => void }>();
  let nextId = 0;
  port.on("message", ({ id, refused }: EmitReply) => {
    const waiter = pending.get(id);
    if (!waiter) return;
    pending.delete(id);
    if (!refused) return waiter.resolve();
    const error = new Error(refused.message);
    error.name = refused.name;
    waiter.reject(error);
  });
  return (value) => {
    let json: string;
    try {
      json = serializeEvent(value);
    } catch (error) {
      return refusedEmit(error);
    }
    const id = nextId++;
    return pendingEmit((resolve, reject) => {
      pending.set(id, { resolve, reject });
      port.postMessage({ id, json } satisfies EmitMessage);
    });
  };
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
