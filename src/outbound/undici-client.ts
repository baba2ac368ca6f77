/**
 * undici's fetch and Agent, loaded by the first outbound call rather than at start. Most
 * apps never call `safeFetch`, and undici's index costs about 9 MB of resident memory in
 * every process (the proxy needs only undici's Pool: src/proxy/undici-pool.ts).
 */
type Undici = typeof import("undici");

let loading: Promise<Undici> | undefined;

export function loadUndici(): Promise<Undici> {
  loading ??= import("undici");
  return loading;
}
