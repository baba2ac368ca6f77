/**
 * undici's fetch and Agent, loaded by the first outbound call rather than at start. Most
 * apps never call `safeFetch`, and undici's index costs about 7 MB of resident memory more
 * than the Pool the proxy needs (src/proxy/undici-pool.ts).
 */
export type Undici = typeof import("undici");

let loading: Promise<Undici> | undefined;

export function loadUndici(): Promise<Undici> {
  loading ??= import("undici");
  return loading;
}
