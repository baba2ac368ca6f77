/**
 * Every error code a client can receive, declared once with its HTTP status, the message
 * it is answered with, and `when` it is answered (the table of docs/reference/error-codes.md,
 * which scripts/docs.mjs writes from this one). Codes are part of the public contract (docs/reference/error-codes.md "Error
 * codes"): never rename one, never reuse a retired one for something else.
 */
export const ERROR_CODES = {
  RPC_METHOD_NOT_ALLOWED: { status: 405, message: "RPC calls must use POST", when: "an RPC route called with any other verb than POST (`Allow: POST`)" },
  RPC_UNKNOWN_TARGET: { status: 404, message: "Unknown plugin or module", when: "unknown kind, plugin or module (and dev routes outside dev mode)" },
  RPC_UNKNOWN_METHOD: { status: 404, message: "Unknown method", when: "unknown method, `policy`, a non-function export, an inherited name (dev mode: `details.method` and `details.didYouMean`)" },
  RPC_TARGET_UNAVAILABLE: { status: 503, message: "This plugin or module failed to load", when: "the plugin or module failed to load at start (the log says why; `--strict` exits instead)" },
  RPC_STREAM_REQUIRED: { status: 400, message: "This method streams: call it with X-APP-Rpc-Stream: 1", when: "a streaming method called without `X-APP-Rpc-Stream: 1`" },
  RPC_NOT_STREAMABLE: { status: 400, message: "This method does not stream", when: "`X-APP-Rpc-Stream: 1` sent to a method that does not stream" },
  RPC_NO_SESSION: { status: 401, message: "A valid session is required", when: "no valid session cookie (missing, forged, expired)" },
  RPC_BAD_CSRF: { status: 403, message: "Missing or invalid CSRF token", when: "`X-APP-CSRF` missing or wrong" },
  RPC_BAD_ORIGIN: { status: 403, message: "Cross-origin call refused", when: "a session-bound call from another origin" },
  RPC_PAYLOAD_TOO_LARGE: { status: 413, message: "Request body too large", when: "body over `maxBodyBytes`" },
  RPC_BODY_TIMEOUT: { status: 408, message: "Request body not received in time", when: "the body did not arrive within the method's `timeoutMs`" },
  RPC_BAD_REQUEST: { status: 400, message: "Malformed RPC request", when: "body not JSON, not an object, `args` not an array, `viewerId`/`contextId` not strings, `__proto__`/`constructor.prototype` keys, a malformed `Content-Type`, malformed multipart or a misplaced file (`details.reason`, \"Files and binary data\"), more than 64 `args` (`details.reason: \"too-many-args\"`), JSON nested more than 64 levels (`\"too-deep\"`), `args` an isolated method cannot receive (`details.reason: \"args-not-transferable\"`)" },
  RPC_BAD_INPUT: { status: 400, message: "The input does not match the method's schema", when: "the argument fails the method's `input` schema, or more than one argument was sent to it (`details.issues: [{ path, message }]`, at most 20, values never echoed)" },
  RPC_FILES_NOT_ACCEPTED: { status: 415, message: "This method takes no files", when: "a multipart body sent to a method without `runtime.files` (\"Files and binary data\")" },
  RPC_FILE_TOO_LARGE: { status: 413, message: "A file is over this method's maxFileBytes", when: "an uploaded file over the method's `maxFileBytes`" },
  RPC_TOO_MANY_FILES: { status: 413, message: "More files than this method's maxFiles", when: "more files than the method's `maxFiles`" },
  RPC_BAD_FILE_TYPE: { status: 415, message: "A file's type is not one this method accepts", when: "an uploaded file's type outside the method's `types`" },
  RPC_AUTH_NO_VERIFIERS: { status: 401, message: "No verifiers are configured for this call", when: "verifier-only method, context configures no verifiers" },
  RPC_AUTH_NOT_CONFIGURED: { status: 401, message: "RPC verification is not configured", when: "verifier-only method, no context at all" },
  RPC_AUTH_FAILED: { status: 401, message: "Verification failed", when: "a verifier refused the call (per `mode`)" },
  RPC_CIRCUIT_OPEN: { status: 503, message: "Circuit breaker is open", when: "the method's breaker is open (`Retry-After`)" },
  RPC_QUEUE_FULL: { status: 429, message: "Too many queued calls", when: "`queueLimit` calls already waiting" },
  RPC_RATE_LIMITED: { status: 429, message: "Too many calls: over this method's rate limit", when: "over the method's `rateLimit` (`Retry-After`, `details.retryAfterMs`)" },
  RPC_TIMEOUT: { status: 504, message: "Method timed out", when: "over `timeoutMs` (`details.queued` when it never ran)" },
  RPC_INTERNAL_ERROR: { status: 500, message: "Internal server error", when: "the method threw something else than an `RpcError` (`details.requestId`)" },
  RPC_WORKER_CRASHED: { status: 500, message: "Isolated worker crashed", when: "the isolation worker died" },
  RPC_BAD_RESULT: { status: 500, message: "Method result is not JSON-serialisable", when: "the result is not JSON-serialisable, or fails the method's `output` schema where that is checked (`details.requestId`; in dev mode also `details.issues`)" },

  PROXY_NO_SESSION: { status: 401, message: "A valid session is required", when: "proxy call without a valid session" },
  PROXY_BAD_CSRF: { status: 403, message: "Missing or invalid CSRF token", when: "proxy call without the right `X-APP-CSRF`" },
  PROXY_UNKNOWN_ALIAS: { status: 404, message: "Unknown proxy alias", when: "no such proxy alias" },
  PROXY_BAD_PATH: { status: 400, message: "Invalid proxy path", when: "a proxy path segment that is `.`/`..` once decoded or holds an encoded `/`, `\\` or NUL" },
  PROXY_AUTH_FAILED: { status: 401, message: "Unauthorized", when: "a proxy verifier refused the call" },
  PROXY_UPSTREAM_ERROR: { status: 502, message: "Upstream unreachable", when: "the upstream is unreachable" },
  PROXY_UPSTREAM_TIMEOUT: { status: 504, message: "Upstream did not answer in time", when: "no upstream headers within the proxy's `timeoutMs`" },
  PROXY_METHOD_NOT_ALLOWED: { status: 405, message: "Method not allowed through the proxy", when: "a verb the proxy does not forward (it takes GET, HEAD, POST, PUT, PATCH, DELETE, OPTIONS)" },
  PROXY_HEADERS_TOO_LARGE: { status: 431, message: "Too many or too large request headers for the proxy", when: "more than 64 client headers, or 8 KiB of them, would go upstream (docs/guides/proxy.md \"Headers\")" },
  PROXY_RATE_LIMITED: { status: 429, message: "Too many requests: over this proxy's rate limit", when: "over the alias's `rateLimit` (`Retry-After`, `details.retryAfterMs`)" },

  SESSION_DATA_TOO_LARGE: { status: 413, message: "Session data over its size limit; nothing was saved", when: "a call or route left its session's data over `server.session.maxDataBytes` (64 KiB); nothing of it was saved" },
  SESSION_STORE_UNAVAILABLE: { status: 503, message: "The session store cannot be reached", when: "the session store (Redis, the cluster's master) could not be reached by a call that reads or writes session data, or a deployment-wide slot could not be taken" },

  NOT_FOUND: { status: 404, message: "Not found", when: "no such file or route" },
  BAD_PATH: { status: 400, message: "Invalid path", when: "a static path that tries to leave its folder" },
  BAD_REQUEST: { status: 400, message: "Bad request", when: "a request the HTTP layer could not parse, or refused with a 4xx status no other code names" },
  PRECONDITION_FAILED: { status: 412, message: "Precondition failed", when: "a static file or the client script asked for with an `If-Match` or `If-Unmodified-Since` it does not meet" },
  RANGE_NOT_SATISFIABLE: { status: 416, message: "Range not satisfiable", when: "a `Range` outside a static file or the client script (`Content-Range: bytes */<length>`)" },
  PAYLOAD_TOO_LARGE: { status: 413, message: "Request body too large", when: "a non-RPC body over the server's limit" },
  UNSUPPORTED_MEDIA_TYPE: { status: 415, message: "Unsupported media type", when: "a non-RPC body of a type the route does not take" },
  SERVICE_UNAVAILABLE: { status: 503, message: "Server is shutting down", when: "the server is shutting down" },
  INTERNAL_ERROR: { status: 500, message: "Internal server error", when: "an unexpected error outside a method (logged with its stack)" },
  METRICS_UNAUTHORIZED: { status: 401, message: "Unauthorized", when: "`/metrics` without the configured bearer token" },
  METRICS_UNAVAILABLE: { status: 503, message: "Metrics are not available right now", when: "`/metrics` in a cluster whose master could not gather every worker's series" },
} as const satisfies Record<string, { status: number; message: string; when: string }>;

export type ErrorCode = keyof typeof ERROR_CODES;
