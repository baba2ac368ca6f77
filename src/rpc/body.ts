/**
 * The bounded RPC body (docs/guides/server-methods.md "Runtime protections", `maxBodyBytes`): a Content-Length
 * over the method's `maxBodyBytes` is refused before a byte is read, and a chunked body
 * is cut off as soon as it passes the limit, so a client cannot make the server buffer
 * more than the limit.
 */
import type { IncomingMessage } from "node:http";
import sjson from "secure-json-parse";
import { errorOf } from "../errors/http-error.js";
import { CallTimeoutError, ClientGoneError, type CallLifetime } from "../runtime/call-lifetime.js";
import { MAX_METHOD_ARGS } from "../runtime/executor.js";
import { jsonDepthExceeds } from "./json-depth.js";

/**
 * How deep a body's JSON may nest, the body's own object and its `args` array included.
 * Far deeper than any viewer's data (a GeoJSON feature collection is about eight levels),
 * and far from the depths at which serialising a result, copying arguments to a worker or
 * saving session data runs out of stack (some thousands): refused when the body is read,
 * not as a 500 from wherever the recursion happens to fail.
 */
export const MAX_JSON_DEPTH = 64;

export interface RpcBody {
  args: unknown[];
  viewerId: string | undefined;
  contextId: string | undefined;
}

function tooLarge(limit: number) {
  return errorOf("RPC_PAYLOAD_TOO_LARGE", { limit });
}

/**
 * Reads the body, at most `limit` bytes. The call's lifetime bounds the wait: a client
 * trickling its body byte by byte must not hold a call (and its socket) open past the
 * call's timeout (408), and a client that leaves ends the read at once.
 */
export function readBoundedBody(req: IncomingMessage, limit: number, lifetime: CallLifetime): Promise<Buffer> {
  const declared = req.headers["content-length"];
  if (declared !== undefined && Number(declared) > limit) return Promise.reject(tooLarge(limit));
  if (req.readableEnded) return Promise.resolve(Buffer.alloc(0));
  // The client may have left during an async check: its "close" has fired already.
  if (lifetime.ended || req.destroyed) return Promise.reject(endedRead(lifetime.reason));
  // After an async check (a `public` function, a dev-mode reload) the parser may have the
  // whole body already: take it from the stream's buffer, without listeners.
  if (req.complete) return readBuffered(req, limit);
  return new Promise<Buffer>((resolve, reject) => {
    const chunks: Buffer[] = [];
    let size = 0;
    // No "error" or "close" listener: Node emits "error" on an aborted request only when
    // one listens, and the gateway ends the lifetime when the client goes away (its
    // response's "close"). A pipelined request whose response is not on the socket yet
    // gets no "close": if that client leaves mid-body, the timer ends the read (408).
    const cleanup = () => {
      req.off("data", onData);
      req.off("end", onEnd);
      lifetime.offEnd(onEnded);
    };
    const onData = (chunk: Buffer) => {
      size += chunk.length;
      if (size > limit) {
        cleanup();
        req.pause();
        reject(tooLarge(limit));
        return;
      }
      chunks.push(chunk);
    };
    const onEnd = () => {
      cleanup();
      resolve(chunks.length === 1 ? chunks[0]! : Buffer.concat(chunks, size));
    };
    const onEnded = (reason: unknown) => {
      cleanup();
      req.pause();
      reject(endedRead(reason));
    };
    req.on("data", onData);
    req.on("end", onEnd);
    lifetime.onEnd(onEnded);
  });
}

/** A timeout while the body is still arriving is the client's slowness: 408, not 504. */
export function endedRead(reason: unknown): unknown {
  return reason instanceof CallTimeoutError ? errorOf("RPC_BODY_TIMEOUT", { timeoutMs: reason.timeoutMs }) : new ClientGoneError();
}

function readBuffered(req: IncomingMessage, limit: number): Promise<Buffer> {
  const chunks: Buffer[] = [];
  let size = 0;
  for (let chunk = req.read() as Buffer | null; chunk !== null; chunk = req.read() as Buffer | null) {
    size += chunk.length;
    if (size > limit) return Promise.reject(tooLarge(limit));
    chunks.push(chunk);
  }
  return Promise.resolve(chunks.length === 1 ? chunks[0]! : Buffer.concat(chunks, size));
}

/** Parses and checks the body shape: `{ args?: array, viewerId?: string, contextId?: string }`. */
export function parseRpcBody(raw: Buffer): RpcBody {
  // An empty body is a call with no arguments, which keeps `curl -X POST` usable.
  if (raw.length === 0) return { args: [], viewerId: undefined, contextId: undefined };
  if (jsonDepthExceeds(raw, MAX_JSON_DEPTH)) {
    throw errorOf("RPC_BAD_REQUEST", { reason: "too-deep", limit: MAX_JSON_DEPTH }, `JSON nested more than ${MAX_JSON_DEPTH} levels deep`);
  }
  let value: unknown;
  try {
    // Rejects "__proto__" / "constructor.prototype" keys anywhere in the body, as
    // Fastify's own JSON parser does, so no argument can carry a prototype payload.
    value = sjson.parse(raw, null, { protoAction: "error", constructorAction: "error" });
  } catch (error) {
    throw errorOf("RPC_BAD_REQUEST", { reason: reasonOf(error) }, "Request body is not valid JSON");
  }
  if (value === null || typeof value !== "object" || Array.isArray(value)) {
    throw errorOf("RPC_BAD_REQUEST", { reason: "body-not-object" }, "Request body must be a JSON object");
  }
  const body = value as Record<string, unknown>;
  if (body.args !== undefined && !Array.isArray(body.args)) {
    throw errorOf("RPC_BAD_REQUEST", { reason: "args-not-array" }, "args must be an array");
  }
  if (Array.isArray(body.args) && body.args.length > MAX_METHOD_ARGS) {
    throw errorOf("RPC_BAD_REQUEST", { reason: "too-many-args", limit: MAX_METHOD_ARGS }, `At most ${MAX_METHOD_ARGS} arguments`);
  }
  for (const field of ["viewerId", "contextId"] as const) {
    if (body[field] !== undefined && typeof body[field] !== "string") {
      throw errorOf("RPC_BAD_REQUEST", { reason: `${field}-not-string` }, `${field} must be a string`);
    }
  }
  return {
    args: (body.args as unknown[] | undefined) ?? [],
    viewerId: body.viewerId as string | undefined,
    contextId: body.contextId as string | undefined,
  };
}

function reasonOf(error: unknown): string {
  const message = (error as Error)?.message ?? "";
  return /prototype|__proto__|constructor/i.test(message) ? "forbidden-key" : "invalid-json";
}
