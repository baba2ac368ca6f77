/**
 * A client of a server under test: a viewer (its session cookie and CSRF token, as the
 * page hands them out) or an anonymous caller. It speaks to the server through whatever
 * `send` it is given (`startTestApp` gives Fastify's `inject`, so no port is opened) and
 * shapes answers as a test asserts on them: status, headers, parsed body, the request id
 * that finds the call's log event.
 */
import { parseJson, streamAnswerOf } from "./answer-parsing.js";
import { keepCookies } from "./cookie-jar.js";
import { itemClient, type ItemClient, type UntypedServerFile } from "./item-client.js";
import type { CallAnswer, CallOptions, HttpAnswer, RawAnswer, RequestOptions, RpcKind, Send, StreamAnswer } from "./wire-types.js";

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
    return streamAnswerOf(await this.#rpc(kind, id, method, args, options, true));
  }

  plugin<M = UntypedServerFile>(id: string, options: CallOptions = {}): ItemClient<M> {
    return itemClient(this, "plugin", id, options);
  }

  module<M = UntypedServerFile>(id: string, options: CallOptions = {}): ItemClient<M> {
    return itemClient(this, "module", id, options);
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
}

function lowerCased(headers: Record<string, string>): Record<string, string> {
  const out: Record<string, string> = {};
  for (const [name, value] of Object.entries(headers)) out[name.toLowerCase()] = value;
  return out;
}
