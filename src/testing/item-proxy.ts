/**
 * The Proxy behind `client.plugin(id)` and `client.module(id)`: every name a method, as
 * in the browser's `xserver.plugin.<id>`, but for the names asked of any object without
 * meaning to call it.
 */

/**
 * Names the item proxies never turn into calls, the browser's own list (src/client/rpc-proxy.ts,
 * which the server side may not import) so that a test reaches exactly the methods a page
 * can: `then` is asked by `await` (returning the client from an async function would call
 * the server), `toJSON` by JSON.stringify and by test runners printing a failed assertion,
 * and the Object.prototype names by anything inspecting an object (the server refuses
 * them as methods anyway). The empty name is never called either. Methods of these
 * names: `client.call`.
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

/**
 * An object whose every other string key is a method calling `invoke(name, args)`;
 * `$stream` is the streaming twin when given.
 */
export function methodProxy(invoke: (method: string, args: unknown[]) => Promise<unknown>, streams?: object): object {
  return new Proxy(Object.create(null) as object, {
    get(_target, name) {
      if (typeof name !== "string" || name === "" || NOT_METHOD_NAMES.has(name)) return undefined;
      if (name === "$stream" && streams) return streams;
      return (...args: unknown[]) => invoke(name, args);
    },
  });
}
