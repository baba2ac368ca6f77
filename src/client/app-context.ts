/**
 * The application context: the HttpClient that RPC calls use unless a caller picks
 * another (docs/guides/browser.md "The transport"). The global `xserver` and every
 * AppElement without its own `client` read it at call time, so replacing it with
 * `xserver.setHttpClient(client)` changes the transport for all of them at once.
 */
import { HttpClient } from "./http-client.js";
import { pageSingleton } from "./shared.js";

/**
 * What the RPC helpers need from a client: HttpClient, or anything with its `request`
 * (and its `stream` for `$stream` calls, which use its `stallTimeoutMs` as their default).
 */
export type RpcTransport = Pick<HttpClient, "request"> & Partial<Pick<HttpClient, "stream" | "stallTimeoutMs">>;

interface AppContext {
  httpClient: RpcTransport | undefined;
}

const context: AppContext = pageSingleton("appContext", () => ({ httpClient: undefined }));

export function getAppHttpClient(): RpcTransport {
  // Created on first use so that loading the library issues no work and reads no state.
  context.httpClient ??= new HttpClient();
  return context.httpClient;
}

export function setAppHttpClient(client: RpcTransport): void {
  checkTransport(client);
  context.httpClient = client;
}

export function checkTransport(client: unknown): asserts client is RpcTransport {
  if (typeof (client as RpcTransport | null)?.request !== "function") {
    throw new TypeError("xserver: the RPC transport must be an HttpClient (an object with request(path, options))");
  }
  if (typeof (client as { proxy?: unknown }).proxy === "string") {
    // RPC paths are the server's own; a proxy client would send them to the upstream.
    throw new TypeError("xserver: an HttpClient in proxy mode cannot carry RPC calls; use one without the proxy option");
  }
}
