/**
 * The Proxy behind `client.plugin(id)` and `client.module(id)`: every name a method, as
 * in the browser's `xserver.plugin.<id>`, but for the names asked of any object without
 * meaning to call it.
 */
// The browser's own list, so that a test reaches exactly the methods a page can.
import { NOT_METHOD_NAMES } from "../core/not-method-names.js";

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
