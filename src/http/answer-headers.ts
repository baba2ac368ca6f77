/**
 * The headers every answer carries: `X-Request-Id` (docs/reference/log-events.md) and the
 * fixed security headers (docs/reference/configuration.md, `server.headers`), whoever writes
 * the answer: Fastify's reply, the proxy, a stream, a file, a server route's or a verifier's
 * own `res`. They are defaults: a header of the same name that the answer sets itself wins.
 *
 * They are added as the head is written, by the server's own `ServerResponse` class, rather
 * than set with `res.setHeader` when the request arrives. A response with one header set that
 * way makes Node's `writeHead` pass every header it is given through `setHeader` as well
 * (validating, lowercasing and storing each in a second list), and Fastify gives all of its
 * own there. On the RPC echo that cost 0.8 KB of allocation per call and about 4 % of its CPU
 * (docs/reference/benchmarks.md "Figures").
 */
import type { IncomingMessage, OutgoingHttpHeader, OutgoingHttpHeaders, ServerResponse as NodeServerResponse } from "node:http";
import { nodeHttp } from "./node-http.js";

const { ServerResponse } = nodeHttp;
type ServerResponse = NodeServerResponse;

type Headers = OutgoingHttpHeaders | OutgoingHttpHeader[];
export type FixedHeaders = ReadonlyArray<readonly [string, string]>;

/** A response that adds the answer headers to its head. */
export interface StampingResponse extends ServerResponse {
  /** Set when the request is routed (its `X-Request-Id`); "" until then. */
  requestId: string;
}

/** The `ServerResponse` class of a server whose answers carry `fixed` and their request id. */
export function stampingResponseClass(fixed: FixedHeaders): typeof ServerResponse {
  class AnswerResponse extends ServerResponse<IncomingMessage> implements StampingResponse {
    requestId = "";
    /**
     * Whether a header was set before the head (`setHeader`, `appendHeader`, `setHeaders`).
     * Node then merges what `writeHead` is given into those by its own rules, which differ
     * between Node lines; the answer headers the head lacks join them the same way.
     */
    #setEarly = false;

    override setHeader(name: string, value: number | string | readonly string[]): this {
      this.#setEarly = true;
      return super.setHeader(name, value);
    }

    override appendHeader(name: string, value: string | readonly string[]): this {
      this.#setEarly = true;
      return super.appendHeader(name, value);
    }

    // Every head goes through here: Node's implicit head (`end` or `write` without
    // `writeHead`, `flushHeaders`) calls `this.writeHead` too.
    override writeHead(statusCode: number, reason?: string | Headers | null, headers?: Headers | null): this {
      // As Node reads its arguments: the headers are the third whenever the second is no reason phrase.
      let given = typeof reason === "string" ? headers : (headers ?? reason);
      if (!this.headersSent) {
        if (this.#setEarly) addMissing(this, fixed, given, null);
        else given = withAnswerHeaders(this, fixed, given);
      }
      return typeof reason === "string" ? super.writeHead(statusCode, reason, given ?? undefined) : super.writeHead(statusCode, given ?? undefined);
    }
  }
  // Node's `writeHeader` is another name for the same function: it must be this one too.
  Object.defineProperty(AnswerResponse.prototype, "writeHeader", { value: AnswerResponse.prototype.writeHead, writable: true, configurable: true });
  // Node's typing makes the class generic in its request type; the server's requests are IncomingMessages.
  return AnswerResponse as typeof ServerResponse;
}

/** Whether `res` is one of the server's own (not, say, light-my-request's for an injected request). */
export function isStamping(res: ServerResponse): res is StampingResponse {
  return typeof (res as Partial<StampingResponse>).requestId === "string";
}

/**
 * The answer headers that neither `res` nor `given` has: pushed onto `out` as name and
 * value, or without `out` set on `res` (headers were set before the head, and `given` goes
 * to Node as it is).
 */
function addMissing(res: StampingResponse, fixed: FixedHeaders, given: Headers | null | undefined, out: OutgoingHttpHeader[] | null): void {
  if (res.requestId !== "" && !res.hasHeader("x-request-id") && !names(given, "x-request-id")) {
    if (out) out.push("x-request-id", res.requestId);
    else res.setHeader("x-request-id", res.requestId);
  }
  for (const [name, value] of fixed) {
    if (res.hasHeader(name) || names(given, name)) continue;
    if (out) out.push(name, value);
    else res.setHeader(name, value);
  }
}

/**
 * With none set before: `given` with the answer headers it lacks in front, as a flat
 * `[name, value, ...]` list (`writeHead` takes one), which Node writes as it is. A new
 * list, as `given` may be a caller's constant, and no new object with names that came
 * from elsewhere (an upstream's `__proto__`).
 */
function withAnswerHeaders(res: StampingResponse, fixed: FixedHeaders, given: Headers | null | undefined): Headers | null | undefined {
  const out: OutgoingHttpHeader[] = [];
  addMissing(res, fixed, given, out);
  if (out.length === 0) return given;
  if (Array.isArray(given)) {
    // Flat (`[name, value, ...]`, a value may be a list), or a list of pairs, as Node tells
    // them apart: by the first entry.
    if (given.length > 0 && Array.isArray(given[0])) for (const pair of given as unknown as OutgoingHttpHeader[][]) out.push(pair[0]!, pair[1]!);
    else for (const entry of given) out.push(entry);
  } else if (given) {
    for (const name in given) if (Object.hasOwn(given, name)) out.push(name, given[name] as OutgoingHttpHeader);
  }
  return out;
}

/** Whether `given` names `lowerName`, in any case. */
function names(given: Headers | null | undefined, lowerName: string): boolean {
  if (!given) return false;
  if (Array.isArray(given)) {
    const pairs = given.length > 0 && Array.isArray(given[0]);
    for (let i = 0; i < given.length; i += pairs ? 1 : 2) {
      const name = pairs ? (given[i] as unknown as unknown[])[0] : given[i];
      if (typeof name === "string" && sameName(name, lowerName)) return true;
    }
    return false;
  }
  for (const name in given) if (sameName(name, lowerName) && Object.hasOwn(given, name)) return true;
  return false;
}

function sameName(name: string, lowerName: string): boolean {
  return name.length === lowerName.length && (name === lowerName || name.toLowerCase() === lowerName);
}
