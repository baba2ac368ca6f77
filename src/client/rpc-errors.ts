/**
 * Telling a call's error apart by its `code`, typed (docs/guides/toolkit.md "Typed calls: counterpart
 * types"). A rejected promise carries no type, so the narrowing is a guard:
 *
 *   try { await xserver.plugin.notes.get({ id }) }
 *   catch (error) {
 *     if (isRpcError(error, xserver.plugin.notes.get) && error.code === "NOTE_MISSING") …
 *   }
 *
 * With the file `counterpart types` writes, each method's type carries the codes its
 * policy declares (`errors: { CODE: … }`); the guard's `code` is those plus the gateway's
 * own, so comparing it with a code the method cannot get does not compile. Without the
 * file, or for a method whose codes could not be read, `code` is a plain string.
 */
import type { HttpError } from "./errors.js";

/**
 * The codes the gateway itself may answer a call with (docs/reference/error-codes.md "Error codes"): the RPC
 * ones, the session store's, a server that is shutting down, the fallbacks of its error
 * handler, and `HTTP_<status>` for an answer without a code (a proxy in front of it).
 * Kept by hand since the client imports nothing of the server: a test holds it equal to
 * the server's table.
 */
export type GatewayRpcCode =
  | "RPC_METHOD_NOT_ALLOWED"
  | "RPC_UNKNOWN_TARGET"
  | "RPC_UNKNOWN_METHOD"
  | "RPC_TARGET_UNAVAILABLE"
  | "RPC_STREAM_REQUIRED"
  | "RPC_NOT_STREAMABLE"
  | "RPC_NO_SESSION"
  | "RPC_BAD_CSRF"
  | "RPC_BAD_ORIGIN"
  | "RPC_PAYLOAD_TOO_LARGE"
  | "RPC_BODY_TIMEOUT"
  | "RPC_BAD_REQUEST"
  | "RPC_BAD_INPUT"
  | "RPC_FILES_NOT_ACCEPTED"
  | "RPC_FILE_TOO_LARGE"
  | "RPC_TOO_MANY_FILES"
  | "RPC_BAD_FILE_TYPE"
  | "RPC_AUTH_NO_VERIFIERS"
  | "RPC_AUTH_NOT_CONFIGURED"
  | "RPC_AUTH_FAILED"
  | "RPC_CIRCUIT_OPEN"
  | "RPC_QUEUE_FULL"
  | "RPC_RATE_LIMITED"
  | "RPC_TIMEOUT"
  | "RPC_INTERNAL_ERROR"
  | "RPC_WORKER_CRASHED"
  | "RPC_BAD_RESULT"
  | "SESSION_DATA_TOO_LARGE"
  | "SESSION_STORE_UNAVAILABLE"
  | "SERVICE_UNAVAILABLE"
  | "BAD_REQUEST"
  | "INTERNAL_ERROR"
  | `HTTP_${number}`;

// Only ever a type: no method function has this property at run time.
declare const DECLARED_ERRORS: unique symbol;

/** What the generated file adds to a method's type: the codes its policy declares (`never`: none). */
export interface DeclaresErrors<Code extends string> {
  readonly [DECLARED_ERRORS]: Code;
}

/** The `code` a call of `Method` may be rejected with: its declared codes and the gateway's, else any string. */
export type RpcErrorCode<Method> = Method extends DeclaresErrors<infer Code> ? Code | GatewayRpcCode : string;

/** An error answer of a call of `Method`: an HttpError whose `code` is typed. */
export type RpcCallError<Method = unknown> = HttpError & { readonly code: RpcErrorCode<Method> };

/**
 * Where the Proxies record the path a method function calls, so that the guard can tell
 * which call an error came from. `Symbol.for`, since a page may use the global xserver of
 * /__app/client.js and a guard of its own bundled copy of this module.
 */
export const RPC_PATH = Symbol.for("counterpart.rpcPath");

/**
 * True when `error` is the error answer of an RPC call (an `HttpError`, by name, as the
 * global client's class is another copy), and, given `method` (a method of
 * `xserver.plugin.<id>`, `.$stream`, or `AppElement.server()`), one of a call of that
 * method: a `try` around two calls then narrows only the one it names.
 */
export function isRpcError<Method extends (...args: never) => unknown = (...args: never) => unknown>(error: unknown, method?: Method): error is RpcCallError<Method> {
  if (!(error instanceof Error) || error.name !== "HttpError") return false;
  const { code, url } = error as Partial<HttpError>;
  if (typeof code !== "string") return false;
  if (method === undefined) return true;
  const path = (method as { [RPC_PATH]?: unknown })[RPC_PATH];
  return typeof path === "string" && typeof url === "string" && url.split(/[?#]/)[0]!.endsWith(path);
}
