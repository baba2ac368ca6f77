/**
 * The public shapes of the browser client: HttpClient options (docs/guides/browser.md
 * "Constructor options" and "Request options"), the auth handler ("Auth handlers"), the
 * secret store that AppUser implements and the page's session-recovery hook ("Session
 * recovery").
 */

export type HttpMethod = "GET" | "HEAD" | "POST" | "PUT" | "PATCH" | "DELETE" | "OPTIONS";

/** `blob`, `arrayBuffer`: the body as such; `stream`: its ReadableStream, handed over once the headers are in. */
export type ExpectMode = "json" | "text" | "auto" | "blob" | "arrayBuffer" | "stream";

export type QueryScalar = string | number | boolean | bigint | Date | null | undefined;
/** Arrays become repeated keys (`?tag=a&tag=b`); null and undefined values are skipped. */
export type QueryParams = Record<string, QueryScalar | readonly QueryScalar[]>;

/** What an auth handler receives (docs/guides/browser.md "Auth handlers"). */
export interface AuthHandlerInput {
  secret: string;
  type: string;
  contextId: string | undefined;
  /** The final URL of the request (proxy prefix and query included). */
  url: string;
  method: string;
}

export type AuthHeaders = Record<string, string> | Headers | readonly (readonly [string, string])[];

export type AuthHandler = (
  input: AuthHandlerInput,
) => AuthHeaders | undefined | void | Promise<AuthHeaders | undefined | void>;

export interface AuthOptions {
  /** Context under which secrets are stored; must equal what the login client uses. */
  contextId?: string;
  /** Auth types applied in order, for example `["jwt"]`. */
  types?: readonly string[];
  /** Per-client handlers; they win over the global ones of the same name. */
  handlers?: Record<string, AuthHandler>;
  /** On a 401, ask for a new secret (`requestSecretUpdate`) and replay once. Default true. */
  refreshOn401?: boolean;
  /** In proxy mode, warn when no secret is found for any type. Default false. */
  required?: boolean;
  /** How long a 401 waits for `setSecret` before it rejects. Default 20000 ms. */
  refreshTimeoutMs?: number;
}

/** The minimum a secret store needs; AppUser also has the event methods used for refresh. */
export interface SecretStore {
  getSecret(type: string, contextId?: string): string | undefined | null | Promise<string | undefined | null>;
  setSecret(value: string, type: string, contextId?: string): void;
  addHandler?(name: string, handler: (payload: unknown) => void): void;
  removeHandler?(name: string, handler: (payload: unknown) => void): void;
  /**
   * Returning the number of handlers called lets a 401 that nobody listens for reject at
   * once; a store that returns nothing makes it wait up to `auth.refreshTimeoutMs`.
   */
  raiseEvent?(name: string, payload?: unknown): number | void;
}

export interface HttpClientOptions {
  /** Prefix: a relative final URL is `baseURL` + `/` + path. In proxy mode, a path below the upstream. */
  baseURL?: string;
  /** Proxy alias: every request goes to `/proxy/<alias>/<baseURL>/<path>`. */
  proxy?: string;
  auth?: AuthOptions;
  /** Source of secrets; defaults to the global AppUser instance. */
  secretStore?: SecretStore;
  /** Per-attempt timeout in ms; default 30000; 0 disables it. */
  timeoutMs?: number;
  /** Retries on 429 and 5xx (docs/guides/browser.md "Retries and timeouts"); default 3; 0 disables. */
  maxRetries?: number;
  /**
   * How long a `$stream` call carried by this client may go without a byte from the
   * server (pings count), and an `xserver` call's answer once its headers are in (a
   * download's body), before it fails with `RPC_STREAM_STALLED`; default 45000; 0
   * disables it.
   */
  stallTimeoutMs?: number;
}

export interface RequestOptions {
  method?: HttpMethod | Lowercase<HttpMethod>;
  headers?: HeadersInit;
  /** Plain objects, arrays, numbers and booleans are sent as JSON; FormData, Blob,
   * URLSearchParams, strings, ArrayBuffer(-views) and ReadableStream go untouched. */
  body?: unknown;
  query?: QueryParams;
  /** Default `auto`: JSON for a JSON content type, text otherwise, null when empty. */
  expect?: ExpectMode;
  /** A caller's abort rejects at once with the signal's reason and is never retried. */
  signal?: AbortSignal;
  /** Overrides the client's `timeoutMs` for this request. */
  timeoutMs?: number;
  /** Overrides the client's `maxRetries` for this request. */
  maxRetries?: number;
  /**
   * Called as the request body goes out, `(loaded, total)` in bytes. fetch cannot tell, so
   * such a request is sent with XMLHttpRequest (a ReadableStream body still goes with
   * fetch, and reports nothing).
   */
  onUploadProgress?: (loaded: number, total: number) => void;
}

/**
 * Options of `HttpClient.stream()`: those of `request()` but `expect`. There `method`
 * defaults to `POST`, and `timeoutMs` bounds each attempt's wait for the answer's
 * headers only: the body has no timeout (end it with `signal` or `cancel()`).
 */
export interface StreamOptions extends Omit<RequestOptions, "expect"> {
  /**
   * Called with each piece of the body as it arrives, before it is decoded, whether
   * `lines()` or `text()` reads it: a sign of life while a long line is still incomplete.
   */
  onChunk?: (chunk: Uint8Array) => void;
}

/** Payload of `requestSecretUpdate`, `secret-updated` and `secret-removed`. */
export interface SecretEventPayload {
  type: string;
  contextId: string | undefined;
}

/** Where a lost session was noticed: an RPC call, or an HttpClient request through `/proxy/`. */
export type SessionLossSource = "rpc" | "proxy";

/** What `window.AppSessionRecovery.handle` receives (docs/guides/browser.md "Session recovery"). */
export interface SessionLossInfo {
  /** The answer's status: 401 for a missing session, 403 for a bad CSRF token. */
  status: number | undefined;
  /** The server's code: `RPC_NO_SESSION`, `RPC_BAD_CSRF`, `PROXY_NO_SESSION` or `PROXY_BAD_CSRF`. */
  code: string;
  /** The server's message. */
  message: string;
  source: SessionLossSource;
}

/**
 * `window.AppSessionRecovery`, set by the page: told once per call that failed because
 * the viewer's session is gone or its CSRF token is stale, typically to reload the page.
 * Not awaited; what it returns or throws does not change the call's rejection.
 */
export interface SessionRecovery {
  handle(info: SessionLossInfo): unknown;
}
