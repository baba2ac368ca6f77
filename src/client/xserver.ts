/**
 * `window.xserver` (docs/guides/browser.md "RPC calls with `xserver`", "Streaming calls",
 * "Dev-mode routes"): `xserver.module[id].method(input)`, `xserver.plugin[id].method(input)`,
 * their `$stream.method(input)` twins and the dev-mode `xserver.server.core.getStatus/getLogs`
 * (with the `server.dev.getLogs` alias).
 */
import { checkTransport, getAppHttpClient, setAppHttpClient, type RpcTransport } from "./app-context.js";
import { rpcCall, rpcPath, rpcRequest, type RpcCallOptions, type RpcDefaults, type RpcKind } from "./rpc.js";
import { rpcTarget, targetProxy, type RpcTarget } from "./rpc-proxy.js";
import { failedStream, rpcStream, type RpcStreamHandle } from "./rpc-stream.js";
import { isRpcError } from "./rpc-errors.js";
import type { ServerTargets } from "./server-methods.js";

export interface LogsPayload {
  /** Entries with an id above this one; pass the previous answer's `nextAfterId` to page on. */
  afterId?: number;
  /** 1 to 500, default 200. */
  limit?: number;
  /** Case-insensitive text in the entry's message or its other fields. */
  search?: string;
  /** `debug`, `info`, `log` (= `info`), `warn`, `error`: one, comma-separated, or an array. */
  level?: string | string[];
  levels?: string | string[];
}

export interface LogEntry {
  id: number;
  time: number;
  /** `time` as an ISO string. */
  timestamp: string;
  level: string;
  msg: string;
  /** The same as `msg`. */
  message: string;
  [field: string]: unknown;
}

export interface LogsAnswer {
  devMode: true;
  scope: "server/core/getLogs" | "server/dev/getLogs";
  entries: LogEntry[];
  /** The next page's `afterId`. */
  nextAfterId: number;
  /** The same as `nextAfterId`. */
  lastId: number;
  hasMore: boolean;
  totalBuffered: number;
  maxEntries: number;
}

type ServerCall<P, R> = (payload?: P, callOptions?: RpcCallOptions) => Promise<R>;

export interface XServer {
  /** Typed by the file `counterpart types` writes; without it, any id and method name. */
  readonly module: ServerTargets<"module">;
  readonly plugin: ServerTargets<"plugin">;
  readonly server: {
    readonly core: {
      readonly getStatus: ServerCall<unknown, unknown>;
      readonly getLogs: ServerCall<LogsPayload, LogsAnswer>;
    };
    /** Compatibility alias of `server.core` for `getLogs` (docs/guides/server-methods.md "Dev mode"). */
    readonly dev: { readonly getLogs: ServerCall<LogsPayload, LogsAnswer> };
  };
  /** The transport; assignable. The global xserver shares it with every AppElement. */
  httpClient: RpcTransport;
  setHttpClient(client: RpcTransport): void;
  /** Sent as `viewerId` with every call when set. */
  viewerId: string | undefined;
  /** Default `contextId` of every call; a call's own `contextId` wins. */
  contextId: string | undefined;
  /** Calls any method by name, including names the proxies hide (such as `then`); never typed. */
  call(kind: RpcKind, id: string, method: string, input?: unknown, callOptions?: RpcCallOptions): Promise<unknown>;
  /** Calls any streaming method by name, including names the proxies hide (such as `$stream`). */
  stream<E = unknown, R = unknown>(kind: RpcKind, id: string, method: string, input?: unknown, callOptions?: RpcCallOptions): RpcStreamHandle<E, R>;
  /** `isRpcError` of the client module, for pages that use the globals: narrows an error's `code` to a method's. */
  readonly isRpcError: typeof isRpcError;
}

export interface XServerOptions {
  /** A transport of its own; without it the xserver uses the application HttpClient. */
  httpClient?: RpcTransport;
  viewerId?: string;
  contextId?: string;
}

export function createXServer(options: XServerOptions = {}): XServer {
  let own: RpcTransport | undefined;
  if (options.httpClient !== undefined) {
    checkTransport(options.httpClient);
    own = options.httpClient;
  }
  const transport = (): RpcTransport => own ?? getAppHttpClient();

  const defaults = (): RpcDefaults => ({ contextId: xserver.contextId, viewerId: xserver.viewerId, client: transport() });
  const invoke = (path: string, input: unknown, callOptions: RpcCallOptions | undefined): Promise<unknown> =>
    rpcCall(rpcRequest(path, input, callOptions, defaults()));

  const scope = (kind: RpcKind): Record<string, RpcTarget> =>
    targetProxy((id) => rpcTarget((method) => rpcPath(kind, id, method), defaults));

  const serverCall =
    <P, R>(group: string, name: string): ServerCall<P, R> =>
    (payload, callOptions) =>
      invoke(`/__rpc/server/${group}/${name}`, payload, callOptions) as Promise<R>;

  const xserver: XServer = {
    module: scope("module"),
    plugin: scope("plugin"),
    server: Object.freeze({
      core: Object.freeze({
        getStatus: serverCall<unknown, unknown>("core", "getStatus"),
        getLogs: serverCall<LogsPayload, LogsAnswer>("core", "getLogs"),
      }),
      dev: Object.freeze({ getLogs: serverCall<LogsPayload, LogsAnswer>("dev", "getLogs") }),
    }),
    get httpClient(): RpcTransport {
      return transport();
    },
    set httpClient(client: RpcTransport) {
      xserver.setHttpClient(client);
    },
    setHttpClient(client: RpcTransport): void {
      checkTransport(client);
      if (own !== undefined) own = client;
      else setAppHttpClient(client);
    },
    viewerId: options.viewerId,
    contextId: options.contextId,
    call: (kind, id, method, input, callOptions) => {
      if (kind !== "module" && kind !== "plugin") return Promise.reject(new TypeError(`xserver.call: kind must be "module" or "plugin"`));
      return invoke(rpcPath(kind, id, method), input, callOptions);
    },
    isRpcError,
    stream: <E, R>(kind: RpcKind, id: string, method: string, input?: unknown, callOptions?: RpcCallOptions) => {
      // Like `call`, a bad kind is a failed call rather than a throw.
      const handle =
        kind === "module" || kind === "plugin"
          ? rpcStream(rpcRequest(rpcPath(kind, id, method), input, callOptions, defaults()))
          : failedStream(new TypeError(`xserver.stream: kind must be "module" or "plugin"`));
      return handle as RpcStreamHandle<E, R>;
    },
  };
  return xserver;
}
