/**
 * The `ctx` a method receives as its first argument (README "Server methods"). Isolated
 * methods get the serialisable part only (`IsolatedRpcContext`), never `req`, `res` or a
 * logger.
 */
import type { IncomingMessage, ServerResponse } from "node:http";
import type { CoreFacade } from "../core/facade.js";
import type { Logger } from "../log/logger.js";

export interface IsolatedRpcContext {
  args: unknown[];
  session: { id: string } | null;
  /** Claims set by a verifier (for example the JWT payload), or null. */
  user: unknown;
  viewerId: string | undefined;
  contextId: string | undefined;
  kind: "plugin" | "module" | "server";
  id: string;
  method: string;
  requestId: string;
  /** This plugin's or module's section of the config. */
  config: unknown;
  /** A frozen view of the server for plugin code: `core.server.devMode`. */
  core: CoreFacade;
  /** Fires on timeout and when the client goes away. */
  signal: AbortSignal;
}

export interface RpcContext extends Omit<IsolatedRpcContext, "args"> {
  log: Logger;
  /** Inline methods only. */
  req: IncomingMessage;
  /** Inline methods only. */
  res: ServerResponse;
}
