/**
 * Page-wide state shared between copies of this library. The server injects
 * /__app/client.js into every page, and an app may also bundle `<package>/client`; both
 * copies must see the same secrets, auth handlers and application HttpClient, or a
 * login client writing to one would never reach requests made by the other. The state
 * hangs off `globalThis` under a registered symbol, which no page script reaches by
 * accident and which both copies compute to the same key.
 */

export function pageSingleton<T>(name: string, create: () => T): T {
  const key = Symbol.for(`counterpart.client.${name}`);
  const holder = globalThis as unknown as Record<symbol, T | undefined>;
  const existing = holder[key];
  if (existing !== undefined) return existing;
  const value = create();
  Object.defineProperty(holder, key, { value, configurable: false, enumerable: false, writable: false });
  return value;
}
