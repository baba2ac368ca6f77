/**
 * A file answer (docs/guides/files.md): the body a method returned with
 * `APP_SERVER.file`, streamed with backpressure (a reader that stops holds the source),
 * ended with the source when the client leaves, and logged once, with the bytes sent,
 * after the last byte. `timeoutMs` covered the method; the body follows the stall rule of
 * streaming answers instead: a byte body cannot carry heartbeats, so a body that moves no
 * byte to the connection for three heartbeats (a source gone silent, or a reader that
 * stopped) is dropped then, as an unread terminal record is: the browser client's stall
 * watchdog would have given up by then, and the source (in an isolated method, its worker)
 * is not held for good.
 */
import { createReadStream } from "node:fs";
import { realpath, stat } from "node:fs/promises";
import { isAbsolute, relative, resolve, sep } from "node:path";
import { Readable } from "node:stream";
import { pipeline } from "node:stream/promises";
import type { FastifyReply } from "fastify";
import type { RpcCall } from "../runtime/call.js";
import type { CallFiles } from "../runtime/call-files.js";
import type { FileResult } from "../plugin-api/file-result.js";
import { answerError, logEvent, type AnswerOptions } from "./answer.js";

interface Opened {
  body: Readable;
  length: number | undefined;
}

export async function answerFile(reply: FastifyReply, call: RpcCall, result: FileResult, options: AnswerOptions, itemDir: string, files: CallFiles, stallMs: number): Promise<void> {
  let opened: Opened;
  try {
    opened = await open(result, itemDir, files);
  } catch (error) {
    answerError(reply, call, error, options);
    return;
  }
  const res = reply.raw;
  if (res.destroyed || reply.sent) {
    opened.body.destroy();
    logEvent(options, "rpc.error", call, 499, "RPC_CLIENT_CLOSED", undefined, { bytes: 0 });
    return;
  }
  reply.hijack();
  res.writeHead(200, {
    "content-type": result.type,
    ...(opened.length === undefined ? {} : { "content-length": opened.length }),
    "content-disposition": contentDisposition(result.inline, result.name),
    "x-content-type-options": "nosniff",
    "cache-control": "no-store",
  });
  let bytes = 0;
  // Refreshed at each chunk: the source is paused while the connection cannot take more.
  const stall = setTimeout(() => res.destroy(), stallMs);
  // The pipeline ends its source only once the step between them asks for a chunk, which
  // a source gone silent never gives: a connection that closes ends the source at once.
  const endSource = () => {
    if (!res.writableFinished) opened.body.destroy();
  };
  res.once("close", endSource);
  // Counted as the source hands chunks on, not by a generator step in the pipeline: on
  // Node 24 such a step made the server's memory for a 1 GiB download grow by some 90 MB
  // more (a bare server measured 4 MB without it, 172 MB with it).
  opened.body.on("data", (chunk: Uint8Array) => {
    bytes += chunk.length;
    stall.refresh();
  });
  try {
    await pipeline(opened.body, res);
    logEvent(options, "rpc.complete", call, 200, undefined, undefined, { bytes });
  } catch (error) {
    // The headers are out: a failure can only cut the body short, which the client sees
    // as a body shorter than its Content-Length or a chunked answer without its end.
    res.destroy();
    const gone = res.writableFinished === false && (error as NodeJS.ErrnoException)?.code === "ERR_STREAM_PREMATURE_CLOSE";
    if (gone) logEvent(options, "rpc.error", call, 499, "RPC_CLIENT_CLOSED", undefined, { bytes });
    else logEvent(options, "rpc.error", call, 500, "RPC_INTERNAL_ERROR", error, { bytes });
  } finally {
    clearTimeout(stall);
    res.off("close", endSource);
  }
}

async function open(result: FileResult, itemDir: string, files: CallFiles): Promise<Opened> {
  const { source } = result;
  if (source instanceof Uint8Array) return { body: Readable.from([source]), length: source.byteLength };
  if (source instanceof Readable) return { body: source, length: undefined };
  if (typeof source === "string") {
    const path = await allowedPath(source, itemDir, files);
    const info = await stat(path);
    if (!info.isFile()) throw new Error(`APP_SERVER.file: ${source} is not a file`);
    return { body: createReadStream(path), length: info.size };
  }
  return { body: Readable.fromWeb(source as import("node:stream/web").ReadableStream<Uint8Array>), length: undefined };
}

/**
 * A path inside the item's own folder (relative paths are taken from there), or inside the
 * call's temporary folder (`ctx.tempDir()`), symlinks resolved: a method's answer never
 * reads the server's other files.
 */
async function allowedPath(path: string, itemDir: string, files: CallFiles): Promise<string> {
  const real = await realpath(resolve(itemDir, path));
  const temp = await files.madeDir();
  for (const folder of [itemDir, temp]) {
    if (folder === undefined) continue;
    const inside = relative(await realpath(folder), real);
    if (inside !== "" && !inside.startsWith(`..${sep}`) && inside !== ".." && !isAbsolute(inside)) return real;
  }
  throw new Error(`APP_SERVER.file: ${path} is neither in the item's folder nor in the call's temporary folder`);
}

/**
 * RFC 6266: `filename` an ASCII fallback (accents dropped, anything else that could break
 * the quoted string replaced), `filename*` the name itself, UTF-8 and percent-encoded.
 */
export function contentDisposition(inline: boolean, name: string | undefined): string {
  const kind = inline ? "inline" : "attachment";
  if (name === undefined || name === "") return kind;
  const ascii = name
    .normalize("NFKD")
    .replace(/[\u0300-\u036f]/g, "")
    .replace(/[^\x20-\x7e]|["\\]/g, "_");
  const encoded = encodeURIComponent(name).replace(/['()*]/g, (c) => `%${c.charCodeAt(0).toString(16).toUpperCase()}`);
  return `${kind}; filename="${ascii}"; filename*=UTF-8''${encoded}`;
}
