/**
 * The names the browser's Proxies never turn into calls (src/client/rpc-proxy.ts, which the
 * server side may not import; test/architecture/not-method-names.test.ts keeps the two
 * copies equal): `then` is asked by `await`, `toJSON` by JSON.stringify, and the
 * Object.prototype names by anything inspecting an object. A method of one of these names
 * is reached only through `xserver.call` (or the test client's `call`), so `counterpart
 * types` gives it no typed entry and the test client's item proxies skip it too.
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
