/**
 * The `ctx` a method receives as its first argument (docs/guides/server-methods.md "Server methods"). Isolated
 * methods get the serialisable part only (`IsolatedRpcContext`), never `req`, `res` or a
 * logger.
 */
import type { IncomingMessage, ServerResponse } from "node:http";
import type { ItemSecure } from "../config/secure-config.js";
import type { CoreFacade } from "../core/facade.js";
import type { Logger } from "../log/logger.js";
import type { TraceContext } from "../tracing/trace-context.js";

/**
 * The viewer's session as a method sees it: a stable `id` (not the cookie's secret) and
 * when it began. Fields a method adds are its data.
 */
export interface RpcSession {
  readonly id: string;
  /** Milliseconds since the epoch. */
  readonly createdAt: number;
  [field: string]: unknown;
}

/**
 * `Config` types `ctx.config` (this item's config section) and `Event` what a streaming
 * method may `emit`; `counterpart types` reads `Event` to type the browser's `$stream`
 * calls. Both default to `unknown`, which is what the server guarantees without them.
 */
export interface IsolatedRpcContext<Config = unknown, Event = unknown> {
  args: unknown[];
  session: RpcSession | null;
  /** Claims set by a verifier (for example the JWT payload), or null. */
  user: unknown;
  viewerId: string | undefined;
  contextId: string | undefined;
  kind: "plugin" | "module" | "server";
  id: string;
  /** The same as `id` (the name code written for xOpat reads). */
  itemId: string;
  method: string;
  /** The request's id: its `X-Request-Id` (a well-formed one the caller sent, or one made for it) and the `reqId` of its log events. */
  requestId: string;
  /**
   * The call's W3C trace context (docs/guides/server-methods.md "Server methods"): `traceId`, `spanId`,
   * `parentSpanId`, `sampled`, and `traceparent` / `tracestate` to send on an outbound
   * request so that it continues the trace as this call's child.
   */
  trace: TraceContext;
  /** This plugin's or module's section of the config. */
  config: Config;
  /** This item's secure config, two tiers merged, and the verifier contexts' view (docs/guides/server-methods.md "Secure config"). */
  secure: ItemSecure;
  /** A frozen view of the server for plugin code: `core.server.devMode`, `core.client.domain`. */
  core: CoreFacade;
  /** Fires on timeout and when the client goes away. */
  signal: AbortSignal;
  /**
   * Streaming methods (`runtime.streaming: true`): sends one event to the caller.
   * Resolves once it is written and the connection can take more, so `await` it in a
   * loop and a reader that stops holds the method instead of filling memory; rejects
   * once the call has ended (timeout, client gone, method returned). Buffered methods'
   * `emit` rejects.
   */
  emit(value: Event): Promise<void>;
  /**
   * The error `code` its policy declares under `errors` (docs/guides/server-methods.md "Server methods"), to
   * throw: `throw ctx.fail("NOT_FOUND", { id })` answers that entry's status and message
   * with `details`. A code the policy does not declare gives an error answered 500.
   */
  fail(code: string, details?: Record<string, unknown>): Error;
  /**
   * The call's temporary folder under `os.tmpdir()`, made on first use and removed when
   * the call ends; a file in it may be answered with `APP_SERVER.file(path)` (removed once
   * sent). Isolated methods get the same folder.
   */
  tempDir(): Promise<string>;
}

export interface RpcContext<Config = unknown, Event = unknown> extends Omit<IsolatedRpcContext<Config, Event>, "args"> {
  log: Logger;
  /** Inline methods only. */
  req: IncomingMessage;
  /** Inline methods only. */
  res: ServerResponse;
}

/** The `ctx` of a route handler registered with `registerServerRoute` (docs/guides/server-methods.md "Boot hooks"). */
export interface RouteContext {
  req: IncomingMessage;
  /** The handler owns the response. */
  res: ServerResponse;
  /** The viewer's session when the request carries a valid cookie (routes never create one), else null. */
  session: RpcSession | null;
  /** True when the X-APP-CSRF header matches the session: check it before acting on a POST. */
  csrfOk: boolean;
  /** The origin the viewer reached the server at (`server.publicOrigin`, else from the request). */
  origin: string;
  secure: ItemSecure;
  core: CoreFacade;
  log: Logger;
  /** Fires when the client goes away. */
  signal: AbortSignal;
  kind: "plugin" | "module";
  itemId: string;
  /**
   * The request's id (docs/reference/log-events.md "Request ids"): the `reqId` of `log`'s
   * lines, and the `X-Request-Id` the answer carries unless the handler sets its own.
   */
  requestId: string;
}
