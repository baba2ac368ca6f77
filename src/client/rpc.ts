/**
 * One RPC call (docs/browser-client.md "RPC calls with `xserver`"): POST
 * `/__rpc/<kind>/<id>/<method>` with `{ args, viewerId?, contextId? }`, resolving to
 * `result`. An error answer rejects with the HttpError the transport raised, which
 * carries `status`, `code`, `details`; a lost session is first reported to the page's
 * `window.AppSessionRecovery` (see session-recovery.ts).
 *
 * Also the Proxy that turns property names into methods. It hands back nothing for
 * `then` (so `await xserver.module.x` does not call a method named "then"), `toJSON`,
 * symbol keys and the Object.prototype names, which the server refuses as methods anyway.
 */
import { checkTransport, getAppHttpClient, type RpcTransport } from "./app-context.js";
import { notifySessionLoss } from "./session-recovery.js";

export type RpcKind = "module" | "plugin";

export interface RpcCallOptions {
  /** Selects the server's RPC verifier context. */
  contextId?: string;
  viewerId?: string;
  signal?: AbortSignal;
  /** The transport for this call; defaults to the application HttpClient. */
  client?: RpcTransport;
  /** Alias of `client`, the name xOpat's runtime uses; `client` wins when both are set. */
  httpClient?: RpcTransport;
  /**
   * The client-side timeout of this call in ms, instead of the transport's own; `0`
   * disables it, for open-ended calls. The server's own method timeout still applies.
   */
  timeoutMs?: number;
}

/** The transport a set of options names: `client`, else its alias `httpClient`. */
export function chosenTransport(options: Pick<RpcCallOptions, "client" | "httpClient"> | undefined): RpcTransport | undefined {
  return options?.client ?? options?.httpClient;
}

/** A method of a plugin or module, as the browser sees it. */
export type RpcMethod = (input?: unknown, callOptions?: RpcCallOptions) => Promise<unknown>;
export type RpcTarget = Record<string, RpcMethod>;

const NOT_METHODS: ReadonlySet<string> = new Set([
  "then",
  "toJSON",
  "constructor",
  "__proto__",
  "toString",
  "toLocaleString",
  "valueOf",
  "hasOwnProperty",
  "isPrototypeOf",
  "propertyIsEnumerable",
  "__defineGetter__",
  "__defineSetter__",
  "__lookupGetter__",
  "__lookupSetter__",
]);

export function isRpcName(key: string | symbol): key is string {
  return typeof key === "string" && key !== "" && !NOT_METHODS.has(key);
}

export interface RpcRequest {
  path: string;
  /** `undefined` sends `args: []`. */
  input: unknown;
  contextId: string | undefined;
  viewerId: string | undefined;
  signal: AbortSignal | undefined;
  timeoutMs: number | undefined;
  client: RpcTransport | undefined;
}

export async function rpcCall(call: RpcRequest): Promise<unknown> {
  const client = call.client ?? getAppHttpClient();
  checkTransport(client);
  const body: { args: unknown[]; viewerId?: string; contextId?: string } = {
    args: call.input === undefined ? [] : [call.input],
  };
  if (typeof call.viewerId === "string") body.viewerId = call.viewerId;
  if (typeof call.contextId === "string") body.contextId = call.contextId;
  let answer: { result?: unknown } | null;
  try {
    answer = await client.request<{ result?: unknown } | null>(call.path, {
      method: "POST",
      body,
      expect: "json",
      ...(call.signal === undefined ? {} : { signal: call.signal }),
      ...(call.timeoutMs === undefined ? {} : { timeoutMs: call.timeoutMs }),
    });
  } catch (error) {
    notifySessionLoss(error, "rpc");
    throw error;
  }
  return answer === null || typeof answer !== "object" ? null : (answer.result ?? null);
}

export function rpcPath(kind: string, id: string, method: string): string {
  return `/__rpc/${encodeURIComponent(kind)}/${encodeURIComponent(id)}/${encodeURIComponent(method)}`;
}

/**
 * A read-only object whose every name-like property is `make(name)`, made once and cached
 * (so `target.m === target.m`). The cache is a Map because the names are chosen by plugin
 * authors; `then`, `toJSON` and symbols are not names (see `isRpcName`).
 */
function namedProxy<T>(make: (name: string) => T): Record<string, T> {
  const cache = new Map<string, T>();
  return new Proxy(Object.create(null) as Record<string, T>, {
    get(_target, key) {
      if (!isRpcName(key)) return undefined;
      let value = cache.get(key);
      if (value === undefined) {
        value = make(key);
        cache.set(key, value);
      }
      return value;
    },
    has(_target, key) {
      return isRpcName(key);
    },
    set() {
      return false;
    },
    defineProperty() {
      return false;
    },
    deleteProperty() {
      return false;
    },
  });
}

/** An object whose every method-like property is a function calling `call(name, …)`. */
export function methodProxy(call: (method: string, input: unknown, callOptions: RpcCallOptions | undefined) => Promise<unknown>): RpcTarget {
  return namedProxy<RpcMethod>((name) => (input?: unknown, callOptions?: RpcCallOptions) => call(name, input, callOptions));
}

/** A Proxy keyed by id whose values are method proxies (`xserver.module[id]`). */
export function targetProxy(makeTarget: (id: string) => RpcTarget): Record<string, RpcTarget> {
  return namedProxy(makeTarget);
}
