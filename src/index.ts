/**
 * The package entry for embedding and for method authors' types. Imports point at the
 * file that defines each thing.
 */
export { createServer, DEMO_ROOT, type AppServer, type CreateServerOptions } from "./app/create-server.js";
export { HttpError, RpcError, StartupError, isHttpError } from "./errors/http-error.js";
export { ERROR_CODES, type ErrorCode } from "./errors/codes.js";
export { STARTUP_ERROR_CODES, type StartupErrorCode } from "./errors/startup-codes.js";
export type { RpcContext, IsolatedRpcContext } from "./plugin-api/context.js";
export type { TraceContext } from "./tracing/trace-context.js";
export type { SessionStore, SessionChanges } from "./state/session-store.js";
export type { MethodPolicy, PublicCheck, PublicCheckInput, CircuitBreakerPolicy, DeclaredErrorPolicy, FilesPolicy } from "./discovery/policy.js";
export type { StandardSchemaV1 } from "./validation/standard-schema.js";
export type { UploadedFile } from "./runtime/uploaded-file.js";
export type { FileResult, FileOptions } from "./plugin-api/file-result.js";
export type { RpcVerifier, RpcVerifierInput, RpcVerifierResult, ProxyVerifier, ProxyVerifierInput, UpstreamState, VerifierResult } from "./auth/verifier-types.js";
export { verifyProxyAuth } from "./proxy/verify-proxy-auth.js";
export type { BootApi, ServerRouteHandler } from "./plugin-api/boot-api.js";
export type { RouteContext, RpcSession } from "./plugin-api/context.js";
export type { AppConfigInput as AppConfig } from "./config/schema.js";
export type { AppServerGlobal } from "./plugin-api/app-server.js";
export { SsrfBlockedError, SsrfRedirectError, UpstreamTimeoutError, UpstreamResponseTooLargeError } from "./outbound/errors.js";
export { validateUpstreamUrl, safeFetch, createOutboundGuard } from "./outbound/guard.js";
export { safeRequest, createSafeRequest, type SafeRequest, type SafeRequestInit, type SafeResponse } from "./outbound/safe-request.js";
