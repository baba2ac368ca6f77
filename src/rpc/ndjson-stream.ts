/**
 * A streaming method's answer (docs/guides/streaming.md): newline-delimited JSON on the
 * call's own response. Headers go out the moment the call is admitted; then one
 * `{"event":…}` line per `ctx.emit`, a `{"ping":true}` line after `streamHeartbeatMs`
 * of silence (so proxies and the browser's stall watchdog see a live connection), and one
 * terminal `{"done":true,…}` record written by the answer step.
 *
 * `emit` resolves once the socket can take more: a reader that stops holds the method at
 * its next `await ctx.emit`, so memory stays flat. Once the call has ended (timeout,
 * client gone, terminal record written) `emit` rejects, and a method that ignores its
 * signal can no longer add to a stream its caller was already answered on.
 */
import type { FastifyReply } from "fastify";
import type { ServerResponse } from "node:http";
import type { CallLifetime } from "../runtime/call-lifetime.js";
import { pendingEmit, refusedEmit, serializeEvent, StreamEndedError, type StreamSink } from "../runtime/stream-sink.js";

const HEADERS = {
  "content-type": "application/x-ndjson; charset=utf-8",
  "cache-control": "no-store",
  // nginx buffers proxied answers unless told not to (docs/guides/deployment.md "Streaming behind a reverse proxy").
  "x-accel-buffering": "no",
};
const PING = '{"ping":true}\n';
const PING_BYTES = Buffer.byteLength(PING);

interface Waiter {
  resolve: () => void;
  reject: (reason: unknown) => void;
}

export class NdjsonStream implements StreamSink {
  /** Events written, for the call's log event. */
  events = 0;
  /** Body bytes written (events, pings and the terminal record). */
  bytes = 0;
  #opened = false;
  /** Set once emits are refused: the call ended or its terminal record is out. */
  #closedReason: unknown = undefined;
  #heartbeat: NodeJS.Timeout | undefined = undefined;
  #waiters: Waiter[] = [];
  readonly #reply: FastifyReply;
  readonly #res: ServerResponse;
  readonly #lifetime: CallLifetime;
  readonly #heartbeatMs: number;

  constructor(reply: FastifyReply, lifetime: CallLifetime, heartbeatMs: number) {
    this.#reply = reply;
    this.#res = reply.raw;
    this.#lifetime = lifetime;
    this.#heartbeatMs = heartbeatMs;
  }

  /** True once the headers went out: from then on every answer is a terminal record. */
  get opened(): boolean {
    return this.#opened;
  }

  open(): void {
    if (this.#opened) return;
    this.#opened = true;
    // From here the response is written by hand; Fastify must not send one of its own.
    this.#reply.hijack();
    const res = this.#res;
    res.writeHead(200, HEADERS);
    // Node holds headers back until the first body byte; the caller should know at once
    // that its call was admitted, not with the first event.
    res.flushHeaders();
    res.on("drain", this.#onDrain);
    this.#lifetime.onEnd(this.#onEnd);
    this.#heartbeat = setTimeout(this.#ping, this.#heartbeatMs);
  }

  emit(value: unknown): Promise<void> {
    if (this.#closedReason !== undefined) return refusedEmit(this.#closedReason);
    let json: string;
    try {
      json = serializeEvent(value);
    } catch (error) {
      return refusedEmit(error);
    }
    this.events += 1;
    return this.#afterWrite(this.#write(`{"event":${json}}\n`));
  }

  emitBatch(jsons: readonly string[]): Promise<void> {
    if (this.#closedReason !== undefined) return refusedEmit(this.#closedReason);
    this.events += jsons.length;
    let text = "";
    for (const json of jsons) text += `{"event":${json}}\n`;
    return this.#afterWrite(this.#write(text));
  }

  /** Resolved now when the socket took the write, else once it drains (or rejected when the call ends first). */
  #afterWrite(accepted: boolean): Promise<void> {
    if (accepted) return Promise.resolve();
    return pendingEmit((resolve, reject) => {
      this.#waiters.push({ resolve, reject });
    });
  }

  /**
   * Writes the terminal record and ends the response. A reader that takes no byte of it
   * for three heartbeats (45 s by default, the browser client's stall timeout) is gone or
   * stuck: the connection is dropped then, so an unread answer never sits in memory for
   * good. `record` is the JSON text after `{"done":true,`.
   */
  finish(record: string): void {
    this.#close(new StreamEndedError());
    const res = this.#res;
    if (res.destroyed || res.writableEnded) return;
    const line = `{"done":true,${record}\n`;
    this.bytes += Buffer.byteLength(line);
    res.end(line);
    if (res.writableFinished) return;
    const unread = setTimeout(() => res.destroy(), 3 * this.#heartbeatMs);
    res.once("close", () => clearTimeout(unread));
  }

  /** Drops the connection without a terminal record: the reader is gone. */
  abandon(): void {
    this.#close(new StreamEndedError());
    this.#res.destroy();
  }

  #write(line: string): boolean {
    this.bytes += Buffer.byteLength(line);
    this.#heartbeat?.refresh();
    return this.#res.write(line);
  }

  readonly #ping = (): void => {
    if (this.#closedReason !== undefined) return;
    // A backlog already tells the reader nothing is wrong; a ping would only add to it.
    if (!this.#res.writableNeedDrain) {
      this.bytes += PING_BYTES;
      this.#res.write(PING);
    }
    this.#heartbeat?.refresh();
  };

  readonly #onDrain = (): void => {
    const waiters = this.#waiters;
    if (waiters.length === 0) return;
    this.#waiters = [];
    for (const waiter of waiters) waiter.resolve();
  };

  readonly #onEnd = (reason: unknown): void => {
    this.#close(reason);
  };

  #close(reason: unknown): void {
    if (this.#closedReason !== undefined) return;
    this.#closedReason = reason;
    clearTimeout(this.#heartbeat);
    this.#heartbeat = undefined;
    this.#lifetime.offEnd(this.#onEnd);
    this.#res.off("drain", this.#onDrain);
    const waiters = this.#waiters;
    this.#waiters = [];
    for (const waiter of waiters) waiter.reject(reason);
  }
}
