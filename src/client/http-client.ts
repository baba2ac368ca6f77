/**
 * HttpClient: the standard way to call the server from the browser (docs/guides/browser.md
 * "`HttpClient`"). It builds the URL (plain or through `/proxy/<alias>`), adds the
 * CSRF header on same-origin calls and auth headers from stored secrets, retries what
 * is safe to retry, and on a 401 asks the login client for a fresh secret once. In
 * proxy mode it tells the page's `window.AppSessionRecovery` when the proxy refuses the
 * viewer's session.
 *
 * Browser code: imports nothing outside src/client and nothing from Node.
 */
import { appUser } from "./app-user.js";
import { addAuthHandler, buildAuthHeaders, removeAuthHandler, secretsChanged } from "./auth-handlers.js";
import { awaitSecretRefresh, canRefresh, DEFAULT_REFRESH_TIMEOUT_MS } from "./auth-refresh.js";
import { isStream, prepareBody, readSuccessBody, type PreparedBody } from "./body.js";
import { abortableSleep } from "./retry.js";
import { sendWithRetries, type ReadOk, type Timing } from "./send.js";
import { notifySessionLoss } from "./session-recovery.js";
import { NdjsonResponse, type StreamResponse } from "./stream-response.js";
import type {
  AuthHandler,
  AuthOptions,
  ExpectMode,
  HttpClientOptions,
  HttpMethod,
  RequestOptions,
  SecretStore,
  StreamOptions,
} from "./types.js";
import { buildUrl, isAbsoluteHttpUrl, isSameOrigin, readCsrfToken } from "./url.js";

export const CSRF_HEADER = "X-APP-CSRF";
export const AUTH_REQUIRED_WARNING = "auth.required=true for proxy request but no secrets found";

/** How long an RPC stream may go without a byte from the server before it counts as stalled. */
export const DEFAULT_STALL_TIMEOUT_MS = 45_000;
const NDJSON_ACCEPT = "application/x-ndjson";

const METHODS: ReadonlySet<string> = new Set<HttpMethod>(["GET", "HEAD", "POST", "PUT", "PATCH", "DELETE", "OPTIONS"]);
const EXPECT_MODES: ReadonlySet<string> = new Set<ExpectMode>(["json", "text", "auto", "blob", "arrayBuffer", "stream"]);

/** The auth settings with their defaults applied. */
export interface ResolvedAuth {
  readonly contextId: string | undefined;
  readonly types: readonly string[];
  readonly handlers: Readonly<Record<string, AuthHandler>>;
  readonly refreshOn401: boolean;
  readonly required: boolean;
  readonly refreshTimeoutMs: number;
}

export type ShorthandOptions = Omit<RequestOptions, "method">;
export type BodyShorthandOptions = Omit<RequestOptions, "method" | "body">;

export class HttpClient {
  /**
   * The waits between retries and their jitter. Replace them to test backoff without
   * real time passing; `sleep` must reject with the signal's reason when it aborts.
   */
  static timing: Timing = { sleep: abortableSleep, random: () => Math.random() };

  /** Registers a global auth handler; a client's own `auth.handlers` still win. */
  static addAuthHandler(name: string, handler: AuthHandler): void {
    addAuthHandler(name, handler);
  }

  /** Removes a global auth handler (the built-in `jwt` too); true when it existed. */
  static removeAuthHandler(name: string): boolean {
    return removeAuthHandler(name);
  }

  readonly baseURL: string | undefined;
  readonly proxy: string | undefined;
  readonly auth: ResolvedAuth;
  readonly secretStore: SecretStore;
  readonly timeoutMs: number;
  readonly maxRetries: number;
  /** The default `stallTimeoutMs` of the `$stream` calls this client carries. */
  readonly stallTimeoutMs: number;
  readonly #warnedTypes = new Set<string>();

  constructor(options: HttpClientOptions = {}) {
    const { baseURL, proxy, auth, secretStore, timeoutMs = 30_000, maxRetries = 3, stallTimeoutMs = DEFAULT_STALL_TIMEOUT_MS } = options;
    if (baseURL !== undefined && typeof baseURL !== "string") throw new TypeError("HttpClient: baseURL must be a string");
    if (proxy !== undefined && (typeof proxy !== "string" || proxy === "")) {
      throw new TypeError("HttpClient: proxy must be a non-empty alias name");
    }
    if (proxy !== undefined && baseURL !== undefined && isAbsoluteHttpUrl(baseURL)) {
      throw new TypeError("HttpClient: in proxy mode baseURL is a path below the upstream, not an absolute URL");
    }
    checkTimeout(timeoutMs, "timeoutMs");
    checkRetries(maxRetries, "maxRetries");
    checkTimeout(stallTimeoutMs, "stallTimeoutMs");
    const store = secretStore ?? appUser;
    if (typeof store?.getSecret !== "function") throw new TypeError("HttpClient: secretStore needs a getSecret(type, contextId) method");
    this.baseURL = baseURL === "" ? undefined : baseURL;
    this.proxy = proxy;
    this.auth = resolveAuth(auth);
    this.secretStore = store;
    this.timeoutMs = timeoutMs;
    this.maxRetries = maxRetries;
    this.stallTimeoutMs = stallTimeoutMs;
  }

  get<T = unknown>(path: string, options?: ShorthandOptions): Promise<T> {
    return this.request<T>(path, { ...options, method: "GET" });
  }

  delete<T = unknown>(path: string, options?: ShorthandOptions): Promise<T> {
    return this.request<T>(path, { ...options, method: "DELETE" });
  }

  post<T = unknown>(path: string, body?: unknown, options?: BodyShorthandOptions): Promise<T> {
    return this.request<T>(path, { ...options, method: "POST", body });
  }

  put<T = unknown>(path: string, body?: unknown, options?: BodyShorthandOptions): Promise<T> {
    return this.request<T>(path, { ...options, method: "PUT", body });
  }

  patch<T = unknown>(path: string, body?: unknown, options?: BodyShorthandOptions): Promise<T> {
    return this.request<T>(path, { ...options, method: "PATCH", body });
  }

  /**
   * Sends a request and resolves to the parsed body (per `expect`). Rejects with
   * `HttpError` on a non-2xx answer, `TimeoutError` when an attempt runs out of time,
   * the caller's abort reason, or the network `TypeError` once retries are used up.
   */
  async request<T = unknown>(path: string, options: RequestOptions = {}): Promise<T> {
    const method = normaliseMethod(options.method);
    const expect = options.expect ?? "auto";
    if (!EXPECT_MODES.has(expect)) throw new TypeError(`HttpClient: expect must be "json", "text", "auto", "blob", "arrayBuffer" or "stream", not ${String(expect)}`);
    const accept = expect === "json" ? "application/json" : undefined;
    return this.#exchange(path, method, options, accept, (response, url) => readSuccessBody(response, expect, method, url)) as Promise<T>;
  }

  /**
   * Sends a request (POST unless `method` says otherwise) and resolves as soon as the
   * headers of an OK answer are in, to a handle whose `lines()` reads the body as NDJSON
   * while it arrives. Auth, CSRF, proxy mode, retries and the 401 refresh are those of
   * `request()`, but only up to that answer: a stream that has begun is never sent again.
   * `timeoutMs` bounds each attempt's wait for the headers; the body has no timeout (end
   * it with `signal` or `cancel()`). A non-2xx answer rejects as `request()` would.
   */
  async stream(path: string, options: StreamOptions = {}): Promise<StreamResponse> {
    const method = normaliseMethod(options.method ?? "POST");
    const { signal, onChunk } = options;
    if (onChunk !== undefined && typeof onChunk !== "function") throw new TypeError("HttpClient: onChunk must be a function");
    return this.#exchange(path, method, options, NDJSON_ACCEPT, async (response, url) => new NdjsonResponse(response, method, url, signal, onChunk));
  }

  /** The transport steps `request()` and `stream()` share, up to an OK answer. */
  async #exchange<T>(
    path: string,
    method: string,
    options: StreamOptions,
    accept: string | undefined,
    readOk: (response: Response, url: string) => Promise<T>,
  ): Promise<T> {
    const timeoutMs = options.timeoutMs ?? this.timeoutMs;
    checkTimeout(timeoutMs, "timeoutMs");
    const url = buildUrl(path, this.baseURL, this.proxy, options.query);
    const prepared = prepareBody(options.body, method);
    // A stream is consumed by the first attempt; nothing is left to send again.
    const maxRetries = prepared.replayable ? (options.maxRetries ?? this.maxRetries) : 0;
    checkRetries(maxRetries, "maxRetries");
    const signal = options.signal;
    if (signal?.aborted) throw signal.reason;
    const onUploadProgress = (options as RequestOptions).onUploadProgress;
    if (onUploadProgress !== undefined && typeof onUploadProgress !== "function") throw new TypeError("HttpClient: onUploadProgress must be a function");
    const read: ReadOk<T> = (response) => readOk(response, url);

    const send = async (firstPass: boolean) => {
      const { headers, secrets } = await this.#headers(url, method, prepared, options.headers, accept, firstPass);
      const attempt = { url, method, headers, body: prepared.body, stream: isStream(prepared.body), timeoutMs, signal, onUploadProgress };
      return { outcome: await sendWithRetries(attempt, read, maxRetries, HttpClient.timing), secrets };
    };

    let { outcome, secrets } = await send(true);
    if (!outcome.ok && outcome.error.status === 401 && prepared.replayable && (await this.#refreshed(secrets, signal))) {
      ({ outcome } = await send(false));
    }
    if (outcome.ok) return outcome.value;
    // Only the proxy's refusals are this client's to report; an RPC call's are reported
    // by the RPC layer, which also sees transports that are not HttpClients.
    if (this.proxy !== undefined) notifySessionLoss(outcome.error, "proxy");
    throw outcome.error;
  }

  async #headers(
    url: string,
    method: string,
    prepared: PreparedBody,
    callerHeaders: HeadersInit | undefined,
    accept: string | undefined,
    warn: boolean,
  ): Promise<{ headers: Headers; secrets: Map<string, string> }> {
    const headers = new Headers();
    if (prepared.contentType !== undefined) headers.set("Content-Type", prepared.contentType);
    if (accept !== undefined) headers.set("Accept", accept);

    const { headers: authHeaders, secrets } = await buildAuthHeaders(this.auth, this.secretStore, url, method, (type) =>
      this.#warnNoHandler(type),
    );
    authHeaders.forEach((value, name) => headers.set(name, value));
    if (warn && this.proxy !== undefined && this.auth.required && secrets.size === 0) console.warn(AUTH_REQUIRED_WARNING);

    // The token goes only to our own origin: sent elsewhere it would let that site
    // forge calls with the viewer's session.
    const token = readCsrfToken();
    if (token !== undefined && isSameOrigin(url)) headers.set(CSRF_HEADER, token);
    else if (token === undefined && warn && this.proxy !== undefined) {
      console.warn(
        `HttpClient: window.APP_CSRF_TOKEN is not set, so the proxy request ${method} ${url} goes out without the ${CSRF_HEADER} header; the server will refuse it unless the page was served with a session.`,
      );
    }

    // What the caller passes for this one request wins over everything the client adds.
    if (callerHeaders !== undefined) new Headers(callerHeaders).forEach((value, name) => headers.set(name, value));
    return { headers, secrets };
  }

  async #refreshed(sent: Map<string, string>, signal: AbortSignal | undefined): Promise<boolean> {
    const { auth, secretStore } = this;
    if (!auth.refreshOn401 || auth.types.length === 0 || !canRefresh(secretStore)) return false;
    // Another request may have refreshed while this one was in flight with the old secret.
    if (await secretsChanged(auth, secretStore, sent)) return true;
    return awaitSecretRefresh(secretStore, auth.types, auth.contextId, auth.refreshTimeoutMs, signal);
  }

  #warnNoHandler(type: string): void {
    if (this.#warnedTypes.has(type)) return;
    this.#warnedTypes.add(type);
    console.warn(
      `HttpClient: a secret of auth type "${type}" is stored but no handler is registered for it, so it adds no header; register one with HttpClient.addAuthHandler("${type}", fn) or auth.handlers.`,
    );
  }
}

function resolveAuth(auth: AuthOptions | undefined): ResolvedAuth {
  const types = auth?.types ?? [];
  if (!Array.isArray(types) || types.some((type) => typeof type !== "string" || type === "")) {
    throw new TypeError("HttpClient: auth.types must be an array of non-empty strings");
  }
  if (auth?.contextId !== undefined && typeof auth.contextId !== "string") {
    throw new TypeError("HttpClient: auth.contextId must be a string");
  }
  const refreshTimeoutMs = auth?.refreshTimeoutMs ?? DEFAULT_REFRESH_TIMEOUT_MS;
  checkTimeout(refreshTimeoutMs, "auth.refreshTimeoutMs");
  return Object.freeze({
    contextId: auth?.contextId,
    types: Object.freeze([...types]),
    handlers: auth?.handlers ?? {},
    refreshOn401: auth?.refreshOn401 ?? true,
    required: auth?.required ?? false,
    refreshTimeoutMs,
  });
}

function normaliseMethod(method: string | undefined): string {
  const upper = (method ?? "GET").toUpperCase();
  if (!METHODS.has(upper)) throw new TypeError(`HttpClient: unsupported method ${String(method)}`);
  return upper;
}

/** The one rule for every duration option; `owner` names where the bad value was given. */
export function checkTimeout(value: unknown, name: string, owner = "HttpClient"): asserts value is number {
  if (typeof value !== "number" || Number.isNaN(value) || value < 0) {
    throw new TypeError(`${owner}: ${name} must be a number of ms, 0 or more (0 disables it)`);
  }
}

function checkRetries(value: unknown, name: string): asserts value is number {
  if (typeof value !== "number" || !Number.isInteger(value) || value < 0) {
    throw new TypeError(`HttpClient: ${name} must be an integer, 0 or more`);
  }
}
