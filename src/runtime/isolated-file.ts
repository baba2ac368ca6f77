/**
 * A file an isolated method answers with `APP_SERVER.file` (docs/guides/files.md "Files and binary
 * data"). Bytes and a path cross with the method's outcome: the main thread sends them as
 * it sends an inline method's (a path checked there, against the item's folder and the
 * call's temporary folder). A stream stays in the worker, which reads it and sends its
 * bytes over a port of their own with the window `ctx.emit` uses (src/runtime/isolated-emit.ts):
 * the main thread acknowledges a batch once its readable has room, so a reader that
 * stops holds the source in the worker within that window. The file's description goes
 * ahead of the bytes, on the call's abort port, as soon as the method returns: the call's
 * timeout covers the method, not the body, and the worker's task lasts until the body's end.
 * A reader that leaves is told to the worker, which ends the source (a Node stream
 * destroyed, a Web stream cancelled).
 */
import { Readable } from "node:stream";
import { MessageChannel, type MessagePort } from "node:worker_threads";
import { FileResult } from "../plugin-api/file-result.js";
import type { SessionFields } from "./isolated-task.js";
import { refuseOverPort, relayBatches, sendOverPort } from "./isolated-emit.js";

/** File bytes the worker may have read ahead of the main thread's readable. */
const WINDOW_BYTES = 1024 * 1024;

/** What describes the file, whatever its source. */
export interface IsolatedFileMeta {
  type: string;
  name: string | undefined;
  inline: boolean;
}

/** A file with bytes or a path, in the method's outcome. */
export type IsolatedFile = IsolatedFileMeta & { source: Uint8Array | string };

/** A streamed file's description, posted on the abort port with the port its bytes come on. */
export interface StreamedFileNotice extends SessionFields {
  streamedFile: IsolatedFileMeta;
  port: MessagePort;
}

interface BodyEnd {
  end: true;
  /** The source failed: the body is cut short. */
  failed?: string;
}

/** Worker: the file's description, with its bytes or path; null for a stream (sent with `sendFileStream`). */
export function isolatedFileOf(result: FileResult): IsolatedFile | null {
  const { source } = result;
  if (typeof source !== "string" && !(source instanceof Uint8Array)) return null;
  return { type: result.type, name: result.name, inline: result.inline, source };
}

/**
 * Worker: announces the file on `notices` and sends the stream's bytes until its end, the
 * reader leaving, or `signal` (the call ended). Resolves when the source is done with.
 */
export async function sendFileStream(result: FileResult, notices: MessagePort, signal: AbortSignal, fields: SessionFields): Promise<void> {
  const source = result.source instanceof Readable ? result.source : Readable.fromWeb(result.source as import("node:stream/web").ReadableStream<Uint8Array>);
  const { port1, port2 } = new MessageChannel();
  notices.postMessage({ ...fields, streamedFile: { type: result.type, name: result.name, inline: result.inline }, port: port2 } satisfies StreamedFileNotice, [port2]);
  const sender = sendOverPort<Uint8Array>(port1, WINDOW_BYTES, (chunk) => chunk.byteLength);
  // A send waiting for room is refused too, so the loop below ends.
  const stop = () => {
    sender.close();
    source.destroy();
  };
  signal.addEventListener("abort", stop, { once: true });
  try {
    for await (const chunk of source as AsyncIterable<Uint8Array | string>) {
      await sender.send(typeof chunk === "string" ? Buffer.from(chunk) : chunk);
    }
    await sender.settle();
    port1.postMessage({ end: true } satisfies BodyEnd);
  } catch (error) {
    source.destroy();
    port1.postMessage({ end: true, failed: error instanceof Error ? error.message : String(error) } satisfies BodyEnd);
  } finally {
    signal.removeEventListener("abort", stop);
    sender.close();
    port1.close();
  }
}

/** Main thread: the notice of a streamed file, or undefined for any other message. */
export function streamedFileNotice(message: unknown): StreamedFileNotice | undefined {
  return typeof message === "object" && message !== null && "streamedFile" in message ? (message as StreamedFileNotice) : undefined;
}

/** Main thread: a file with bytes or a path, as an inline method's. */
export function fileResultOf(file: IsolatedFile): FileResult {
  return new FileResult(file.source, file);
}

/** Main thread: a streamed file, its body a readable fed from the worker's port. */
export function streamedFileResult(notice: StreamedFileNotice): FileResult {
  return new FileResult(portReadable(notice.port), notice.streamedFile);
}

/**
 * The worker's bytes as a Node readable. A batch is acknowledged once pushed with room to
 * spare, else when the reader asks for more; destroying the readable (the reader left)
 * refuses the worker's next send, which ends its source.
 */
function portReadable(port: MessagePort): Readable {
  let resume: (() => void) | undefined;
  let ended = false;
  const readable = new Readable({
    read() {
      const wake = resume;
      resume = undefined;
      wake?.();
    },
    destroy(error, done) {
      if (!ended) refuseOverPort(port, new Error("the reader left"));
      ended = true;
      port.close();
      done(error);
    },
  });
  relayBatches<Uint8Array>(
    port,
    (chunks) => {
      let room = true;
      for (const chunk of chunks) room = readable.push(chunk);
      return room ? Promise.resolve() : new Promise<void>((resolve) => (resume = resolve));
    },
    (message) => {
      const end = message as BodyEnd;
      if (end.end !== true) return;
      ended = true;
      if (end.failed !== undefined) readable.destroy(new Error(`the file's source failed: ${end.failed}`));
      else readable.push(null);
      port.close();
    },
  );
  // A worker that dies mid-body closes the port without an end.
  port.once("close", () => {
    if (!ended) readable.destroy(new Error("the worker ended before the file did"));
  });
  return readable;
}
