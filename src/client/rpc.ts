/**
 * One RPC call (docs/guides/browser.md "RPC calls with `xserver`"): POST
 * `/__rpc/<kind>/<id>/<method>` with `{ args, viewerId?, contextId? }`, resolving to
 * `result`. An error answer rejects with the HttpError the transport raised, which
 * carries `status`, `code`, `details`; a lost session is first reported to the page's
 * `window.AppSessionRecovery` (see session-recovery.ts). The streaming twin of `rpcCall`
 * is in rpc-stream.ts, the Proxies that turn names into calls in rpc-proxy.ts.
 */
import { checkTransport, getAppHttpClient, type RpcTransport } from "./app-context.js";
import { checkTimeout, CSRF_HEADER, HttpClient } from "./http-client.js";
import { notifySessionLoss } from "./session-recovery.js";
import { isJsonContentType } from "./body.js";
import { ResponseParseError, StreamError } from "./errors.js";
import type { StreamResponse } from "./stream-response.js";
import { Watchdog } from "./watchdog.js";
import { extractBlobs, uploadForm } from "./upload-args.js";
import { isAbsoluteHttpUrl, isSameOrigin, joinPath, readCsrfToken } from "./url.js";

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
   * Through an HttpClient it bounds the wait for the answer's headers (the method's run);
   * the body (a download) has `stallTimeoutMs` instead. Ignored by `$stream` calls.
   */
  timeoutMs?: number;
  /**
   * How long the answer may go without a byte from the server once its headers are in (a
   * download's body; a `$stream` call, heartbeats counting, from its headers on) before the
   * call fails with `RPC_STREAM_STALLED`; default the transport's `stallTimeoutMs`, else
   * 45000; `0` disables it.
   */
  stallTimeoutMs?: number;
  /**
   * Calls whose input holds a Blob: `(loaded, total)` bytes of the upload so far. The
   * call is then sent with XMLHttpRequest, since fetch reports no upload progress.
   */
  onUploadProgress?: (loaded: number, total: number) => void;
}

/** What a set of calls shares unless a call's own options say otherwise. */
export interface RpcDefaults {
  contextId?: string | undefined;
  viewerId?: string | undefined;
  client?: RpcTransport | undefined;
}

/** The transport a set of options names: `client`, else its alias `httpClient`. */
export function chosenTransport(options: Pick<RpcCallOptions, "client" | "httpClient"> | undefined): RpcTransport | undefined {
  return options?.client ?? options?.httpClient;
}

export interface RpcRequest {
  path: string;
  /** `undefined` sends `args: []`. */
  input: unknown;
  contextId: string | undefined;
  viewerId: string | undefined;
  signal: AbortSignal | undefined;
  timeoutMs: number | undefined;
  stallTimeoutMs: number | undefined;
  client: RpcTransport | undefined;
  onUploadProgress: ((loaded: number, total: number) => void) | undefined;
}

/** A call's request: its own options first, then the defaults. */
export function rpcRequest(path: string, input: unknown, callOptions: RpcCallOptions | undefined, defaults: RpcDefaults): RpcRequest {
  return {
    path,
    input,
    contextId: callOptions?.contextId ?? defaults.contextId,
    viewerId: callOptions?.viewerId ?? defaults.viewerId,
    signal: callOptions?.signal,
    timeoutMs: callOptions?.timeoutMs,
    stallTimeoutMs: callOptions?.stallTimeoutMs,
    client: chosenTransport(callOptions) ?? defaults.client,
    onUploadProgress: callOptions?.onUploadProgress,
  };
}

export interface RpcBody {
  args: unknown[];
  viewerId?: string;
  contextId?: string;
}

export function rpcBody(call: RpcRequest): RpcBody {
  const body: RpcBody = { args: call.input === undefined ? [] : [call.input] };
  if (typeof call.viewerId === "string") body.viewerId = call.viewerId;
  if (typeof call.contextId === "string") body.contextId = call.contextId;
  return body;
}

/**
 * The CSRF header of an RPC call through `client`, when it needs one from us. Any object
 * with `request` may carry RPC calls, and xOpat's HttpClient adds `X-APP-CSRF` only in
 * proxy mode, since xOpat's xserver adds it to RPC calls itself: so do we. An HttpClient
 * of ours adds it already (read afresh at each retry). The token goes only where the call
 * stays on the page's origin, the transport's `baseURL` applied.
 */
export function rpcCsrfHeaders(client: RpcTransport, path: string): Record<string, string> {
  const token = readCsrfToken();
  if (token === undefined || client instanceof HttpClient) return {};
  const baseURL = (client as { baseURL?: unknown }).baseURL;
  const url = typeof baseURL === "string" && baseURL !== "" && !isAbsoluteHttpUrl(path) ? joinPath(baseURL, path) : path;
  return isSameOrigin(url) ? { [CSRF_HEADER]: token } : {};
}

/**
 * One call. An input holding Blobs goes as multipart (docs/guides/files.md "Files and binary data").
 * Through an HttpClient of ours, `timeoutMs` covers the wait for the answer's headers (the
 * server sends them when the method returns); the body then follows the stall rule of
 * `$stream` calls: no byte for `stallTimeoutMs` fails with `RPC_STREAM_STALLED`, however
 * long a large download takes in all. An answer that is not JSON (a file) resolves to a Blob.
 */
export async function rpcCall(call: RpcRequest): Promise<unknown> {
  const client = call.client ?? getAppHttpClient();
  checkTransport(client);
  const files = extractBlobs(call.input);
  const json = rpcBody(files ? { ...call, input: files.input } : call);
  const headers = rpcCsrfHeaders(client, call.path);
  if (client instanceof HttpClient) return watchedCall(client, call, files ? uploadForm(json, files.blobs) : json, files !== undefined);
  let answer: unknown;
  try {
    answer = await client.request<unknown>(call.path, {
      method: "POST",
      body: json,
      expect: "json",
      ...(CSRF_HEADER in headers ? { headers } : {}),
      ...(call.signal === undefined ? {} : { signal: call.signal }),
      ...(call.timeoutMs === undefined ? {} : { timeoutMs: call.timeoutMs }),
    });
  } catch (error) {
    notifySessionLoss(error, "rpc");
    throw error;
  }
  return resultOf(answer);
}

/** A call through an HttpClient of ours: headers within `timeoutMs`, the body under the stall watchdog. */
async function watchedCall(client: HttpClient, call: RpcRequest, body: unknown, multipart: boolean): Promise<unknown> {
  const stallTimeoutMs = call.stallTimeoutMs ?? client.stallTimeoutMs;
  checkTimeout(stallTimeoutMs, "stallTimeoutMs", "xserver");
  const controller = new AbortController();
  const { signal } = controller;
  const caller = call.signal;
  const onCallerAbort = (): void => controller.abort(caller?.reason);
  caller?.addEventListener("abort", onCallerAbort, { once: true });
  if (caller?.aborted) onCallerAbort();
  const stalled = new StreamError("RPC_STREAM_STALLED", `POST ${call.path}: nothing of the answer arrived for ${stallTimeoutMs} ms`, { url: call.path, method: "POST" });
  const watchdog = new Watchdog(stallTimeoutMs, () => controller.abort(stalled));
  try {
    let response: StreamResponse;
    try {
      response = await client.stream(call.path, {
        method: "POST",
        body,
        // Any answer: JSON, or the file a method returned.
        headers: { accept: "*/*" },
        signal,
        ...(call.timeoutMs === undefined ? {} : { timeoutMs: call.timeoutMs }),
        ...(call.onUploadProgress === undefined || !multipart ? {} : { onUploadProgress: call.onUploadProgress }),
        onChunk: () => watchdog.arm(),
      });
    } catch (error) {
      notifySessionLoss(error, "rpc");
      throw error;
    }
    watchdog.arm();
    if (!isJsonContentType(response.headers.get("content-type"))) return await response.blob();
    const text = await response.text();
    if (text === "") return null;
    try {
      return resultOf(JSON.parse(text) as unknown);
    } catch (error) {
      throw new ResponseParseError("POST", call.path, response.status, text, error);
    }
  } catch (error) {
    // Whatever a stop made the transport throw, the caller sees the reason it stopped for.
    if (signal.aborted) throw signal.reason;
    throw error;
  } finally {
    watchdog.stop();
    caller?.removeEventListener("abort", onCallerAbort);
  }
}

function resultOf(answer: unknown): unknown {
  const parsed = answer as { result?: unknown } | null;
  return parsed === null || typeof parsed !== "object" ? null : (parsed.result ?? null);
}

export function rpcPath(kind: string, id: string, method: string): string {
  return `/__rpc/${encodeURIComponent(kind)}/${encodeURIComponent(id)}/${encodeURIComponent(method)}`;
}
