/**
 * The Proxies that turn property names into RPC calls: `target.method(input)` for a
 * buffered call and `target.$stream.method(input)` for a streaming one. `$stream` is
 * reserved: it is an object (pages test `typeof target.$stream === "object"` to learn
 * that streaming is there), so a method really named `$stream` is reached through
 * `xserver.call`. The Proxies hand back nothing for `then` (so `await xserver.module.x`
 * does not call a method named "then"), `toJSON`, symbol keys and the Object.prototype
 * names, which the server refuses as methods anyway.
 */
import { rpcCall, rpcRequest, type RpcCallOptions, type RpcDefaults } from "./rpc.js";
import { rpcStream, type RpcStreamHandle } from "./rpc-stream.js";
import { RPC_PATH } from "./rpc-errors.js";

/** A method of a plugin or module, as the browser sees it. */
export type RpcMethod = (input?: unknown, callOptions?: RpcCallOptions) => Promise<unknown>;
/** The same method called as a stream: the handle comes back at once. */
export type RpcStreamMethod = <E = unknown, R = unknown>(input?: unknown, callOptions?: RpcCallOptions) => RpcStreamHandle<E, R>;
export type RpcStreamTarget = Readonly<Record<string, RpcStreamMethod>>;
export type RpcTarget = Readonly<Record<string, RpcMethod>> & { readonly $stream: RpcStreamTarget };

export const STREAM_SCOPE = "$stream";

/**
 * The names the Proxies hand back nothing for. `counterpart types` (src/authoring) and the
 * test client (src/testing) keep copies, since neither may import the client: a test
 * (test/architecture/not-method-names.test.ts) holds the three equal.
 */
export const NOT_METHOD_NAMES: ReadonlySet<string> = new Set([
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
  return typeof key === "string" && key !== "" && !NOT_METHOD_NAMES.has(key);
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

/**
 * The methods of one plugin or module: each name calls `pathOf(name)` with the call's
 * options over `defaults()`, read at call time so that later changes count.
 */
export function rpcTarget(pathOf: (method: string) => string, defaults: () => RpcDefaults): RpcTarget {
  const request = (method: string, input: unknown, callOptions: RpcCallOptions | undefined) =>
    rpcRequest(pathOf(method), input, callOptions, defaults());
  const streams = namedProxy<RpcStreamMethod>((name) =>
    withPath(((input?: unknown, callOptions?: RpcCallOptions) => rpcStream(request(name, input, callOptions))) as RpcStreamMethod, pathOf(name)),
  );
  return namedProxy<RpcMethod | RpcStreamTarget>((name) =>
    name === STREAM_SCOPE ? streams : withPath((input?: unknown, callOptions?: RpcCallOptions) => rpcCall(request(name, input, callOptions)), pathOf(name)),
  ) as RpcTarget;
}

/** Records the path a method calls, for `isRpcError(error, method)` (rpc-errors.ts). */
function withPath<F extends (...args: never) => unknown>(method: F, path: string): F {
  return Object.defineProperty(method, RPC_PATH, { value: path });
}

/** A Proxy keyed by id whose values are method proxies (`xserver.module[id]`). */
export function targetProxy(makeTarget: (id: string) => RpcTarget): Record<string, RpcTarget> {
  return namedProxy(makeTarget);
}
