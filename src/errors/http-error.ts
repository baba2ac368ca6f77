import { ERROR_CODES, type ErrorCode } from "./codes.js";
import type { StartupErrorCode } from "./startup-codes.js";

/**
 * Marks every error that answers a client with its own status and code. A registered
 * symbol rather than `instanceof`: a plugin may bundle its own copy of this package, and
 * an `RpcError` from that copy must still answer its status and code, not a generic 500.
 */
const HTTP_ERROR = Symbol.for("counterpart.HttpError");

/**
 * The one error shape a client sees: `{ error, code, details }` with an HTTP status.
 * The server raises its own through `errorOf(code)`, so status and message always come
 * from the code table (docs/reference/error-codes.md).
 */
export class HttpError extends Error {
  readonly status: number;
  readonly code: string;
  readonly details: Record<string, unknown>;

  constructor(status: number, code: string, message: string, details: Record<string, unknown> = {}) {
    super(message);
    this.name = "HttpError";
    this.status = Number.isInteger(status) && status >= 400 && status <= 599 ? status : 500;
    this.code = code;
    this.details = details;
  }

  toJSON(): { error: string; code: string; details: Record<string, unknown> } {
    return { error: this.message, code: this.code, details: this.details };
  }
}

// On the prototype, and defined rather than declared: each instance inherits it at no
// cost, and the brand stays out of the type, so the declarations of two copies of the
// package (or of src/ and dist/) stay interchangeable.
Object.defineProperty(HttpError.prototype, HTTP_ERROR, { value: true });

/**
 * An error made by the server from the code table with its declared message: its text and
 * details are the server's own, never a method's, so it needs no secret masking.
 */
class CodeTableError extends HttpError {}

/** True for an error `errorOf` made with the table's own message. */
export function isFromCodeTable(error: HttpError): boolean {
  return error instanceof CodeTableError;
}

/** What a method author throws to answer a clean error: `new RpcError(status, code, message, details?)`. */
export class RpcError extends HttpError {
  constructor(status: number, code: string, message: string, details: Record<string, unknown> = {}) {
    super(status, code, message, details);
    this.name = "RpcError";
  }
}

/** True for an `HttpError` (an `RpcError` included) from this copy of the package or any other. */
export function isHttpError(value: unknown): value is HttpError {
  return typeof value === "object" && value !== null && (value as { [HTTP_ERROR]?: unknown })[HTTP_ERROR] === true;
}

/** `new` without a stack: an expected outcome's stack points nowhere useful. */
function withoutStack<T>(make: () => T): T {
  const limit = Error.stackTraceLimit;
  Error.stackTraceLimit = 0;
  try {
    return make();
  } finally {
    Error.stackTraceLimit = limit;
  }
}

/** One error per code, made once: the prototype of every error `errorOf` makes with the table's message. */
const codeTemplates = new Map<ErrorCode, HttpError>();

/**
 * An error from the code table, with its declared status and message. These are expected
 * outcomes (a refused call, a full queue): no stack, and with the table's message no
 * `Error` constructed either. The error inherits its status, code, message and brand from
 * its code's template and holds only its own `details`: constructing an Error, even
 * without a stack, was about 2 µs of a refused call's CPU time in a profile
 * (docs/reference/benchmarks.md "Refusals"). It is an `HttpError` and an `Error` by
 * `instanceof`, like any other.
 */
export function errorOf(code: ErrorCode, details: Record<string, unknown> = {}, message?: string): HttpError {
  const entry = ERROR_CODES[code];
  if (message !== undefined) return withoutStack(() => new HttpError(entry.status, code, message, details));
  let template = codeTemplates.get(code);
  if (template === undefined) {
    template = withoutStack(() => new CodeTableError(entry.status, code, entry.message, {}));
    codeTemplates.set(code, template);
  }
  const error = Object.create(template) as HttpError & { details: Record<string, unknown> };
  // Its own property, which the template's `readonly` declaration does not stop.
  (error as { details: Record<string, unknown> }).details = details;
  return error;
}

const refusals = new Map<ErrorCode, HttpError>();

/**
 * The table's error for `code` with no details, one frozen instance for every call: for the
 * checks that refuse calls by the thousand (no session, a bad CSRF token, an unknown
 * method). Making a new Error per refusal, even without a stack, was about a tenth of a
 * refused call's CPU time (a CPU profile of `npm run bench` section "refusals"). Frozen, so
 * that nobody can hang one call's `cause` on every call's error: an error that needs one
 * comes from `errorOf`.
 */
export function refusalOf(code: ErrorCode): HttpError {
  let error = refusals.get(code);
  if (error === undefined) {
    error = errorOf(code);
    Object.freeze(error.details);
    Object.freeze(error);
    refusals.set(code, error);
  }
  return error;
}

/**
 * Errors that stop the server from starting: printed as one line, exit non-zero. `code`
 * says which kind (src/errors/startup-codes.ts).
 */
export class StartupError extends Error {
  readonly code: StartupErrorCode;

  constructor(code: StartupErrorCode, message: string, options?: { cause?: unknown }) {
    super(message, options);
    this.name = "StartupError";
    this.code = code;
  }
}
