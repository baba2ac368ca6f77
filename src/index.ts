/**
 * The package entry for embedding and for method authors' types. Imports point at the
 * file that defines each thing.
 */
export { createServer, DEMO_ROOT, type AppServer, type CreateServerOptions } from "./server/create-server.js";
export { RpcError } from "./errors/http-error.js";
export { ERROR_CODES, type ErrorCode } from "./errors/codes.js";
export type { RpcContext, IsolatedRpcContext } from "./rpc/context.js";
export type { MethodPolicy, PublicCheck, PublicCheckInput, CircuitBreakerPolicy } from "./rpc/policy.js";
export type { RpcVerifier, RpcVerifierInput, RpcVerifierResult } from "./auth/rpc-verifiers.js";
export type { ProxyVerifier, ProxyVerifierInput, UpstreamState } from "./proxy/verifiers.js";
export { verifyProxyAuth } from "./proxy/verify-proxy-auth.js";
export type { BootApi } from "./discovery/discover.js";
export type { AppConfigInput as AppConfig } from "./config/schema.js";
export type { AppServerGlobal } from "./server/app-server-global.js";
export { SsrfBlockedError, SsrfRedirectError } from "./outbound/errors.js";
export { validateUpstreamUrl, safeFetch, createOutboundGuard } from "./outbound/guard.js";
