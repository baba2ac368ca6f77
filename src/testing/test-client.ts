/**
 * A client of a server under test: a viewer (its session cookie and CSRF token, as the
 * page hands them out) or an anonymous caller. It speaks to the server through whatever
 * `send` it is given (`startTestApp` gives Fastify's `inject`, so no port is opened) and
 * shapes answers as a test asserts on them: status, headers, parsed body, the request id
 * that finds the call's log event.
 */
import { RpcCallError } from "./call-error.js";
import { keepCookies } from "./cookie-jar.js";
import type { ArgsOf, EventOf, MethodNames, ResultOf, ServerMethod } from "./method-types.js";

export type AnswerHeaders = Record<string, string | string[] | undefined>;

/** One request as the client sends it. */
export interface OutgoingRequest {
  method: string;
  url: string;
  headers: Record<string, string>;
  payload?: string | Buffer;
}

/** One answer as the server gave it. */
export interface RawAnswer {
  status: number;
  headers: AnswerHeaders;
  payload: Buffer;
  /** The server's id of the request: the `reqId` of its log event. */
  reqId: string;
}

export type Send = (request: OutgoingRequest) => Promise<RawAnswer>;

export type RpcKind = "plugin" | "module" | "server";

export interface CallOptions {
  /** The verifier context (`server.secure.rpcVerifiers.<contextId>`). */
  contextId?: string;
  viewerId?: string;
  /** `false` leaves out the X-APP-CSRF header, as a forged cross-site request would. */
  csrf?: boolean;
  /** Sent on top of (and over) the client's own headers. */
  headers?: Record<string, string>;
  /** Sent instead of `{ args, contextId, viewerId }`: an object as JSON, a string or Buffer as it is. */
  body?: unknown;
}

/** An RPC answer's JSON: `{ result }`, or `{ error, code, details }`. */
export interface RpcAnswerBody {
  result?: any;
  error?: string;
  code?: string;
  details?: Record<string, any>;
}

export interface CallAnswer {
  status: number;
  headers: AnswerHeaders;
  body: RpcAnswerBody;
  /** The body as sent. */
  text: string;
  reqId: string;
}

/** A stream's last record (README "Streaming answers"). */
export type StreamEnd =
  | { done: true; ok: true; result: any }
  | { done: true; ok: false; error: string; code: string; status: number; details: Record<string, any> };

export interface StreamAnswer {
  status: number;
  headers: AnswerHeaders;
  /** The value of each `{"event": …}` record, in order. */
  events: any[];
  /** The last record, or null when the stream never started (see `body`) or ended without one. */
  end: StreamEnd | null;
  /** Every record as sent, `{"ping": true}` ones included. */
  records: Array<Record<string, any>>;
  /** The JSON error of a call refused before it started streaming, else null. */
  body: RpcAnswerBody | null;
  text: string;
  reqId: string;
}

export interface HttpAnswer {
  status: number;
  headers: AnswerHeaders;
  text: string;
  payload: Buffer;
  /** The body parsed as JSON (throws when it is not). */
  json(): any;
  reqId: string;
}

export interface RequestOptions {
  method?: string;
  /** The path and query, sent as given (`/plugins/notes/app.js`, `/health`). */
  url: string;
  headers?: Record<string, string>;
  /** A string or Buffer as it is; anything else as JSON (with its content type). */
  body?: unknown;
  /** `false` leaves out the X-APP-CSRF header. */
  csrf?: boolean;
}

/** Any server file's module, when a test does not name its type. */
export type UntypedServerFile = Record<string, (ctx: any, ...args: any[]) => any>;

/**
 * The methods of one plugin or module, called as the browser's `xserver.plugin.<id>`
 * calls them: each resolves to the result or rejects with an `RpcCallError`. Typed by the
 * server file's module type: `viewer.plugin<typeof Notes>("notes")` after `import type * as Notes from "…/notes.server.js"`.
 */
export type ItemClient<M = UntypedServerFile> = {
  [K in MethodNames<M>]: (...args: ArgsOf<M[K]>) => Promise<ResultOf<M[K]>>;
} & {
  /** Streaming methods: every event, then the result, once the stream has ended. */
  $stream: { [K in MethodNames<M>]: (...args: ArgsOf<M[K]>) => Promise<{ events: Array<EventOf<M[K]>>; result: ResultOf<M[K]> }> };
};

const STREAM_HEADER = "x-app-rpc-stream";
const CSRF_HEADER = "x-app-csrf";

export class TestClient {
  readonly #send: Send;
  /** Cookies by name; null for an anonymous client, which never keeps one. */
  readonly #cookies: Map<string, string> | null;
  readonly #csrf: string | null;

  constructor(send: Send, session: { cookies: Map<string, string>; csrf: string } | null) {
    this.#send = send;
    this.#cookies = session ? new Map(session.cookies) : null;
    this.#csrf = session?.csrf ?? null;
  }

  /** The Cookie header this client sends, or null. */
  get cookie(): string | null {
    if (!this.#cookies || this.#cookies.size === 0) return null;
    return [...this.#cookies].map(([name, value]) => `${name}=${value}`).join("; ");
  }

  /** The CSRF token its page carried (`window.APP_CSRF_TOKEN`), or null. */
  get csrf(): string | null {
    return this.#csrf;
  }

  /**
   * `POST /__rpc/<kind>/<id>/<method>` with `{"args": args}`. Never throws for an error
   * answer: the test reads `status` and `body.code`.
   */
  async call(kind: RpcKind, id: string, method: string, args: unknown[] = [], options: CallOptions = {}): Promise<CallAnswer> {
    const answer = await this.#rpc(kind, id, method, args, options, false);
    const text = answer.payload.toString("utf8");
    return { status: answer.status, headers: answer.headers, body: parseJson(text) ?? {}, text, reqId: answer.reqId };
  }

  /**
   * A streaming method's call (`X-APP-Rpc-Stream: 1`), read to its end: its events in
   * order and its last record. The answer is complete before this resolves, so a test
   * sees what the viewer would have, not when.
   */
  async stream(kind: RpcKind, id: string, method: string, args: unknown[] = [], options: CallOptions = {}): Promise<StreamAnswer> {
    const answer = await this.#rpc(kind, id, method, args, options, true);
    const text = answer.payload.toString("utf8");
    const base = { status: answer.status, headers: answer.headers, text, reqId: answer.reqId };
    if (!String(answer.headers["content-type"] ?? "").startsWith("application/x-ndjson")) {
      return { ...base, events: [], end: null, records: [], body: parseJson(text) ?? {} };
    }
    const records = text
      .split("\n")
      .filter((line) => line !== "")
      .map((line) => JSON.parse(line) as Record<string, any>);
    const events = records.filter((record) => Object.hasOwn(record, "event")).map((record) => record.event);
    const last = records.at(-1);
    return { ...base, events, end: last?.done === true ? (last as StreamEnd) : null, records, body: null };
  }

  plugin<M = UntypedServerFile>(id: string, options: CallOptions = {}): ItemClient<M> {
    return this.#item("plugin", id, options);
  }

  module<M = UntypedServerFile>(id: string, options: CallOptions = {}): ItemClient<M> {
    return this.#item("module", id, options);
  }

  /** `/proxy/<alias>/<path>` with the client's session; `path` may carry a query. */
  proxy(alias: string, path = "", init: Omit<RequestOptions, "url"> = {}): Promise<HttpAnswer> {
    return this.request({ ...init, url: `/proxy/${encodeURIComponent(alias)}/${path.replace(/^\/+/, "")}` });
  }

  /** Any request with the client's cookie and CSRF header: pages, static files, routes boot hooks registered. */
  async request(init: RequestOptions): Promise<HttpAnswer> {
    const headers: Record<string, string> = {};
    let payload: string | Buffer | undefined;
    if (typeof init.body === "string" || Buffer.isBuffer(init.body)) payload = init.body;
    else if (init.body instanceof Uint8Array) payload = Buffer.from(init.body);
    else if (init.body !== undefined) {
      payload = JSON.stringify(init.body);
      headers["content-type"] = "application/json";
    }
    const answer = await this.#exchange(init.method ?? "GET", init.url, { ...headers, ...init.headers }, payload, init.csrf);
    const text = answer.payload.toString("utf8");
    return {
      status: answer.status,
      headers: answer.headers,
      text,
      payload: answer.payload,
      json: () => JSON.parse(text) as unknown,
      reqId: answer.reqId,
    };
  }

  #rpc(kind: RpcKind, id: string, method: string, args: unknown[], options: CallOptions, streaming: boolean): Promise<RawAnswer> {
    if (!Array.isArray(args)) throw new TypeError(`${kind}/${id}/${method}: args is the array of the method's arguments after ctx, e.g. [{ q: "x" }]`);
    const body = options.body !== undefined ? options.body : { args, contextId: options.contextId, viewerId: options.viewerId };
    const payload = typeof body === "string" || Buffer.isBuffer(body) ? body : JSON.stringify(body);
    const headers: Record<string, string> = { "content-type": "application/json" };
    if (streaming) headers[STREAM_HEADER] = "1";
    const url = `/__rpc/${encodeURIComponent(kind)}/${encodeURIComponent(id)}/${encodeURIComponent(method)}`;
    return this.#exchange("POST", url, { ...headers, ...options.headers }, payload, options.csrf);
  }

  async #exchange(method: string, url: string, headers: Record<string, string>, payload: string | Buffer | undefined, csrf = true): Promise<RawAnswer> {
    const own: Record<string, string> = {};
    const cookie = this.cookie;
    if (cookie !== null) own.cookie = cookie;
    if (csrf && this.#csrf !== null) own[CSRF_HEADER] = this.#csrf;
    const answer = await this.#send({ method, url, headers: { ...own, ...lowerCased(headers) }, payload });
    if (this.#cookies) keepCookies(this.#cookies, answer.headers["set-cookie"]);
    return answer;
  }

  #item<M>(kind: RpcKind, id: string, options: CallOptions): ItemClient<M> {
    const buffered = async (method: string, args: unknown[]): Promise<unknown> => {
      const answer = await this.call(kind, id, method, args, options);
      if (answer.status === 200 && Object.hasOwn(answer.body, "result")) return answer.body.result;
      throw errorOf(answer.status, answer.body, answer.text, answer.reqId);
    };
    const streamed = async (method: string, args: unknown[]): Promise<{ events: unknown[]; result: unknown }> => {
      const answer = await this.stream(kind, id, method, args, options);
      if (answer.body) throw errorOf(answer.status, answer.body, answer.text, answer.reqId);
      if (!answer.end) {
        throw new RpcCallError({ status: answer.status, code: "RPC_STREAM_TRUNCATED", message: `${kind}/${id}/${method}: the stream ended without its last record`, body: answer.records, reqId: answer.reqId });
      }
      if (!answer.end.ok) throw errorOf(answer.end.status, answer.end, answer.text, answer.reqId);
      return { events: answer.events, result: answer.end.result };
    };
    return methodProxy(buffered, methodProxy(streamed)) as ItemClient<M>;
  }
}

/**
 * Names asked of any object without meaning to call it: `then` by `await` (returning the
 * client from an async function would call the server), `toJSON` by JSON.stringify and by
 * test runners printing a failed assertion. Methods of these names: `client.call`.
 */
const NOT_METHODS = new Set(["then", "toJSON"]);

/**
 * An object whose every other string key is a method calling `invoke(name, args)`;
 * `$stream` is the streaming twin when given.
 */
function methodProxy(invoke: (method: string, args: unknown[]) => Promise<unknown>, streams?: object): object {
  return new Proxy(Object.create(null) as object, {
    get(_target, name) {
      if (typeof name !== "string" || NOT_METHODS.has(name)) return undefined;
      if (name === "$stream" && streams) return streams;
      return (...args: unknown[]) => invoke(name, args);
    },
  });
}

function errorOf(status: number, body: RpcAnswerBody, text: string, reqId: string): RpcCallError {
  return new RpcCallError({
    status,
    message: typeof body.error === "string" ? body.error : text.slice(0, 200) || `HTTP ${status}`,
    code: typeof body.code === "string" ? body.code : undefined,
    details: body.details,
    body,
    reqId,
  });
}

function parseJson(text: string): any {
  if (text === "") return null;
  try {
    return JSON.parse(text) as unknown;
  } catch {
    return null;
  }
}

function lowerCased(headers: Record<string, string>): Record<string, string> {
  const out: Record<string, string> = {};
  for (const [name, value] of Object.entries(headers)) out[name.toLowerCase()] = value;
  return out;
}
