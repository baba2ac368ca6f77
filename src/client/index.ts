/**
 * `<package>/client`: the browser library for bundlers (docs/guides/browser.md). The same
 * code is served as one classic script at /__app/client.js (see browser-entry.ts).
 * Browser code only: nothing here imports from the server side or from Node.
 */
export { HttpClient, CSRF_HEADER, AUTH_REQUIRED_WARNING } from "./http-client.js";
export type { ResolvedAuth, ShorthandOptions, BodyShorthandOptions } from "./http-client.js";
export { HttpError, TimeoutError, ResponseParseError, StreamError } from "./errors.js";
export type { StreamErrorCode } from "./errors.js";
export { isRpcError } from "./rpc-errors.js";
export type { DeclaresErrors, GatewayRpcCode, RpcCallError, RpcErrorCode } from "./rpc-errors.js";
export { AppUser, appUser, APP_USER_EVENTS } from "./app-user.js";
export type { EventHandler } from "./app-user.js";
export { AppElement } from "./app-element.js";
export type { AppElementTarget, ServerOptions } from "./app-element.js";
export { createXServer } from "./xserver.js";
export type { XServer, XServerOptions, LogsPayload, LogsAnswer, LogEntry } from "./xserver.js";
export type { RpcCallOptions, RpcKind } from "./rpc.js";
export type { RpcMethod, RpcStreamMethod, RpcStreamTarget, RpcTarget } from "./rpc-proxy.js";
export type { RpcStreamHandle } from "./rpc-stream.js";
export type { ServerMethods, ServerTargets, ServerTarget, ServerItemId, ServerItemIdOf } from "./server-methods.js";
export type { StreamResponse } from "./stream-response.js";
export type { RpcTransport } from "./app-context.js";
export type { Timing } from "./send.js";
export type {
  AuthHandler,
  AuthHandlerInput,
  AuthHeaders,
  AuthOptions,
  ExpectMode,
  HttpClientOptions,
  HttpMethod,
  QueryParams,
  QueryScalar,
  RequestOptions,
  StreamOptions,
  SecretEventPayload,
  SecretStore,
  SessionLossInfo,
  SessionLossSource,
  SessionRecovery,
} from "./types.js";
