/**
 * Every error code a client can receive, declared once with its HTTP status and the
 * message it is answered with. Codes are part of the public contract (README "Error
 * codes"): never rename one, never reuse a retired one for something else.
 */
export const ERROR_CODES = {
  RPC_METHOD_NOT_ALLOWED: { status: 405, message: "RPC calls must use POST" },
  RPC_UNKNOWN_TARGET: { status: 404, message: "Unknown plugin or module" },
  RPC_UNKNOWN_METHOD: { status: 404, message: "Unknown method" },
  RPC_TARGET_UNAVAILABLE: { status: 503, message: "This plugin or module failed to load" },
  RPC_STREAM_REQUIRED: { status: 400, message: "This method streams: call it with X-APP-Rpc-Stream: 1" },
  RPC_NOT_STREAMABLE: { status: 400, message: "This method does not stream" },
  RPC_NO_SESSION: { status: 401, message: "A valid session is required" },
  RPC_BAD_CSRF: { status: 403, message: "Missing or invalid CSRF token" },
  RPC_BAD_ORIGIN: { status: 403, message: "Cross-origin call refused" },
  RPC_PAYLOAD_TOO_LARGE: { status: 413, message: "Request body too large" },
  RPC_BODY_TIMEOUT: { status: 408, message: "Request body not received in time" },
  RPC_BAD_REQUEST: { status: 400, message: "Malformed RPC request" },
  RPC_BAD_INPUT: { status: 400, message: "The input does not match the method's schema" },
  RPC_FILES_NOT_ACCEPTED: { status: 415, message: "This method takes no files" },
  RPC_FILE_TOO_LARGE: { status: 413, message: "A file is over this method's maxFileBytes" },
  RPC_TOO_MANY_FILES: { status: 413, message: "More files than this method's maxFiles" },
  RPC_BAD_FILE_TYPE: { status: 415, message: "A file's type is not one this method accepts" },
  RPC_AUTH_NO_VERIFIERS: { status: 401, message: "No verifiers are configured for this call" },
  RPC_AUTH_NOT_CONFIGURED: { status: 401, message: "RPC verification is not configured" },
  RPC_AUTH_FAILED: { status: 401, message: "Verification failed" },
  RPC_CIRCUIT_OPEN: { status: 503, message: "Circuit breaker is open" },
  RPC_QUEUE_FULL: { status: 429, message: "Too many queued calls" },
  RPC_RATE_LIMITED: { status: 429, message: "Too many calls: over this method's rate limit" },
  RPC_TIMEOUT: { status: 504, message: "Method timed out" },
  RPC_INTERNAL_ERROR: { status: 500, message: "Internal server error" },
  RPC_WORKER_CRASHED: { status: 500, message: "Isolated worker crashed" },
  RPC_BAD_RESULT: { status: 500, message: "Method result is not JSON-serialisable" },

  PROXY_NO_SESSION: { status: 401, message: "A valid session is required" },
  PROXY_BAD_CSRF: { status: 403, message: "Missing or invalid CSRF token" },
  PROXY_UNKNOWN_ALIAS: { status: 404, message: "Unknown proxy alias" },
  PROXY_BAD_PATH: { status: 400, message: "Invalid proxy path" },
  PROXY_AUTH_FAILED: { status: 401, message: "Unauthorized" },
  PROXY_UPSTREAM_ERROR: { status: 502, message: "Upstream unreachable" },
  PROXY_UPSTREAM_TIMEOUT: { status: 504, message: "Upstream did not answer in time" },
  PROXY_METHOD_NOT_ALLOWED: { status: 405, message: "Method not allowed through the proxy" },
  PROXY_HEADERS_TOO_LARGE: { status: 431, message: "Too many or too large request headers for the proxy" },
  PROXY_RATE_LIMITED: { status: 429, message: "Too many requests: over this proxy's rate limit" },

  SESSION_DATA_TOO_LARGE: { status: 413, message: "Session data over its size limit; nothing was saved" },
  SESSION_STORE_UNAVAILABLE: { status: 503, message: "The session store cannot be reached" },

  NOT_FOUND: { status: 404, message: "Not found" },
  BAD_PATH: { status: 400, message: "Invalid path" },
  BAD_REQUEST: { status: 400, message: "Bad request" },
  PRECONDITION_FAILED: { status: 412, message: "Precondition failed" },
  RANGE_NOT_SATISFIABLE: { status: 416, message: "Range not satisfiable" },
  PAYLOAD_TOO_LARGE: { status: 413, message: "Request body too large" },
  UNSUPPORTED_MEDIA_TYPE: { status: 415, message: "Unsupported media type" },
  SERVICE_UNAVAILABLE: { status: 503, message: "Server is shutting down" },
  INTERNAL_ERROR: { status: 500, message: "Internal server error" },
  METRICS_UNAUTHORIZED: { status: 401, message: "Unauthorized" },
  METRICS_UNAVAILABLE: { status: 503, message: "Metrics are not available right now" },
} as const satisfies Record<string, { status: number; message: string }>;

export type ErrorCode = keyof typeof ERROR_CODES;
