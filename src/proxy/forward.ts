/**
 * The forwarding engine: one keep-alive undici `Pool` per proxy alias and a dispatch
 * handler that copies the upstream answer straight onto the client's response. Nothing
 * is buffered whole: each direction moves chunk by chunk, and a full socket on one side
 * pauses the other (the request body is a stream undici pauses; the answer pauses the
 * upstream parser until the client's socket drains). A client that goes away aborts the
 * upstream request, which closes its connection.
 */
import type { IncomingMessage, ServerResponse } from "node:http";
import type { Dispatcher } from "undici";
import type { Attributes } from "@opentelemetry/api";
import type { ProxyConfig } from "../config/schema.js";
import { DEFAULT_TIMEOUT_MS } from "../config/resolve.js";
import { clientResponseHeaders, serverHeldFirst } from "./headers.js";
import { closeWhenIdle } from "./idle-watch.js";
import { parseBaseUrl, type UpstreamBase } from "./target.js";
import { LazyPool } from "./undici-pool.js";
import { proxyAuthEnabled } from "../auth/verifier-types.js";

/** Connecting gets at most this long even with a larger `timeoutMs`. */
const MAX_CONNECT_TIMEOUT_MS = 10_000;
/** Longest silence allowed inside an answer body (a paused, back-pressured body does not count). */
const BODY_IDLE_TIMEOUT_MS = 300_000;
const MAX_CONNECTIONS_PER_ALIAS = 256;

export interface Upstream {
  alias: string;
  config: ProxyConfig;
  base: UpstreamBase;
  timeoutMs: number;
  authEnabled: boolean;
  /** Lowercased names. */
  staticHeaders: ReadonlyArray<readonly [string, string]>;
  staticNames: ReadonlySet<string>;
  pool: LazyPool;
  /** What a proxy span says of the upstream: its host and port, never its path or credentials. */
  spanAttributes: Attributes;
}

/** The upstreams of every configured alias, built once; `close()` ends their pools. */
export class Upstreams {
  readonly #byAlias = new Map<string, Upstream>();

  constructor(proxies: ReadonlyMap<string, ProxyConfig>) {
    for (const [alias, config] of proxies) {
      const base = parseBaseUrl(config.baseUrl);
      const timeoutMs = config.timeoutMs ?? DEFAULT_TIMEOUT_MS;
      const staticHeaders = Object.entries(config.headers ?? {}).map(([name, value]) => [name.toLowerCase(), value] as const);
      this.#byAlias.set(alias, {
        alias,
        config,
        base,
        timeoutMs,
        authEnabled: proxyAuthEnabled(config),
        staticHeaders,
        staticNames: new Set(staticHeaders.map(([name]) => name)),
        spanAttributes: spanAttributesOf(alias, base.origin),
        pool: new LazyPool(base.origin, {
          connect: { timeout: Math.min(timeoutMs, MAX_CONNECT_TIMEOUT_MS) },
          headersTimeout: timeoutMs,
          bodyTimeout: BODY_IDLE_TIMEOUT_MS,
          // Bounds what one alias can open towards its upstream; more requests wait.
          connections: MAX_CONNECTIONS_PER_ALIAS,
        }),
      });
    }
  }

  /** Own entries only (a `Map`): `__proto__` or `toString` never resolve. */
  get(alias: string): Upstream | undefined {
    return this.#byAlias.get(alias);
  }

  async close(): Promise<void> {
    await Promise.all([...this.#byAlias.values()].map((upstream) => upstream.pool.close().catch(() => upstream.pool.destroy())));
  }
}

function spanAttributesOf(alias: string, origin: string): Attributes {
  const url = new URL(origin);
  const port = url.port === "" ? (url.protocol === "https:" ? 443 : 80) : Number(url.port);
  return { "counterpart.proxy.alias": alias, "server.address": url.hostname, "server.port": port };
}

/** The client went away: nobody to answer, and the upstream request is aborted. */
export class ClientGoneError extends Error {
  readonly code = "PROXY_CLIENT_CLOSED";
  constructor() {
    super("client closed the connection");
    this.name = "ClientGoneError";
  }
}

export interface ForwardOutcome {
  /** The upstream status once its headers were sent on, else null. */
  status: number | null;
  /** Null on success. */
  error: Error | null;
  /** True when the client left before the answer was complete. */
  clientGone: boolean;
}

export interface ForwardRequest {
  upstream: Upstream;
  method: string;
  path: string;
  headers: Record<string, string>;
  /** Names the verifiers added or changed, null when no verifier ran. */
  verifierNames: ReadonlySet<string> | null;
  req: IncomingMessage;
  res: ServerResponse;
  done(outcome: ForwardOutcome): void;
}

/**
 * Starts the upstream request; `done` is called exactly once.
 *
 * While a request is proxied, a client socket that moves nothing for twice the alias's
 * `timeoutMs` plus a second — longer than connecting and waiting for the upstream's
 * headers can take — (an upload that stalls, a download nobody reads) is closed, which aborts
 * the upstream request: otherwise a slow client could hold an upstream connection open
 * for ever (undici's own timers pause while the client is the one that is slow).
 */
export function forward(request: ForwardRequest): void {
  const { req, upstream } = request;
  const headers = request.headers;
  const body = hasBody(req) ? req : null;
  if (!body) delete headers["content-length"];
  const stopWatching = closeWhenIdle(req.socket, upstream.timeoutMs * 2 + 1000);
  const handler = new ForwardHandler(request.res, (outcome) => {
    stopWatching();
    request.done(outcome);
  });
  try {
    const ordered = serverHeldFirst(headers, upstream.staticNames, request.verifierNames);
    upstream.pool.dispatch({ path: request.path, method: request.method, headers: ordered, body }, handler);
  } catch (error) {
    // A header value a verifier set that undici refuses, for instance.
    handler.onResponseError(null, error as Error);
  }
}

function hasBody(req: IncomingMessage): boolean {
  if (req.headers["transfer-encoding"] !== undefined) return true;
  const length = req.headers["content-length"];
  return length !== undefined && length !== "0";
}

class ForwardHandler implements Dispatcher.DispatchHandler {
  readonly #res: ServerResponse;
  readonly #done: (outcome: ForwardOutcome) => void;
  #controller: Dispatcher.DispatchController | null = null;
  #status: number | null = null;
  #finished = false;
  #clientGone = false;

  constructor(res: ServerResponse, done: (outcome: ForwardOutcome) => void) {
    this.#res = res;
    this.#done = done;
    res.on("drain", () => this.#controller?.resume());
    res.on("close", () => {
      if (this.#finished) return;
      this.#clientGone = true;
      this.#controller?.abort(new ClientGoneError());
    });
  }

  onRequestStart(controller: Dispatcher.DispatchController): void {
    this.#controller = controller;
    if (this.#clientGone) controller.abort(new ClientGoneError());
  }

  onResponseStart(controller: Dispatcher.DispatchController, statusCode: number, headers: Record<string, string | string[] | undefined>): void {
    // 1xx informational answers are this hop's business; the final one follows.
    if (statusCode < 200 || this.#finished) return;
    try {
      this.#res.writeHead(statusCode, clientResponseHeaders(headers, this.#res.getHeader("vary")));
    } catch (error) {
      // A header Node refuses to send (invalid characters): the upstream answer is unusable.
      controller.abort(error as Error);
      return;
    }
    this.#status = statusCode;
  }

  onResponseData(controller: Dispatcher.DispatchController, chunk: Buffer): void {
    // A destroyed response means the client left: the abort is already on its way.
    if (this.#status === null || this.#res.destroyed) return;
    if (!this.#res.write(chunk)) controller.pause();
  }

  onResponseEnd(): void {
    if (this.#finished) return;
    this.#finished = true;
    this.#res.end();
    this.#done({ status: this.#status, error: null, clientGone: false });
  }

  onResponseError(_controller: Dispatcher.DispatchController | null, error: Error): void {
    if (this.#finished) return;
    this.#finished = true;
    // Headers already went out: a JSON error can no longer be sent, so the client must
    // see a broken answer rather than a truncated one that looks complete.
    if (this.#status !== null && !this.#res.destroyed) this.#res.destroy(error);
    this.#done({ status: this.#status, error, clientGone: this.#clientGone || error instanceof ClientGoneError });
  }
}
