import { ERROR_CODES, type ErrorCode } from "./codes.js";

/**
 * The one error shape a client sees: `{ error, code, details }` with an HTTP status.
 * `RpcError` is the public name method authors throw; the server uses `errorOf(code)`
 * so that status and message always come from the code table.
 */
export class RpcError extends Error {
  readonly status: number;
  readonly code: string;
  readonly details: Record<string, unknown>;

  constructor(status: number, code: string, message: string, details: Record<string, unknown> = {}) {
    super(message);
    this.name = "RpcError";
    this.status = Number.isInteger(status) && status >= 400 && status <= 599 ? status : 500;
    this.code = code;
    this.details = details;
  }

  toJSON(): { error: string; code: string; details: Record<string, unknown> } {
    return { error: this.message, code: this.code, details: this.details };
  }
}

/** An error from the code table, with its declared status and message. */
export function errorOf(code: ErrorCode, details: Record<string, unknown> = {}, message?: string): RpcError {
  const entry = ERROR_CODES[code];
  return new RpcError(entry.status, code, message ?? entry.message, details);
}

/** Errors that stop the server from starting: printed as one line, exit non-zero. */
export class StartupError extends Error {
  constructor(message: string, options?: { cause?: unknown }) {
    super(message, options);
    this.name = "StartupError";
  }
}
