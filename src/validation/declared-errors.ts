/**
 * Declared errors (docs/guides/server-methods.md "Server methods"): a policy entry's `errors: { CODE: { status,
 * message? } }`, answered by `throw ctx.fail("CODE", details?)`. The policy schema
 * (config/schema.ts) has checked the entries when the item loaded; this builds the lookup
 * once, and `ctx.fail` only reads it.
 */
import { RpcError } from "../errors/http-error.js";

export interface DeclaredError {
  status: number;
  message: string;
}

/** By code: a `Map`, so that a code such as `__proto__` or `toString` is never found by accident. */
export type DeclaredErrors = ReadonlyMap<string, DeclaredError>;

/** The lookup for a checked `errors` entry; null when the method declares none. */
export function declaredErrorsOf(errors: Readonly<Record<string, { status: number; message?: string }>> | undefined): DeclaredErrors | null {
  if (errors === undefined) return null;
  const declared = new Map<string, DeclaredError>();
  for (const code of Object.keys(errors)) {
    const entry = errors[code]!;
    declared.set(code, { status: entry.status, message: entry.message ?? code });
  }
  return declared.size === 0 ? null : declared;
}

/**
 * What `ctx.fail(code, details)` returns: the declared error as an `RpcError`, or, for a
 * code the policy does not declare, a plain `Error`, which answers 500: the method has a
 * bug, and the client must not receive a code it was never told about.
 */
export function failWith(errors: DeclaredErrors | null, method: string, code: string, details?: Record<string, unknown>): Error {
  const declared = typeof code === "string" ? errors?.get(code) : undefined;
  if (!declared) return new Error(`ctx.fail(${JSON.stringify(String(code))}): not declared in the policy's errors of ${method}`);
  return new RpcError(declared.status, code, declared.message, isPlainDetails(details) ? details : {});
}

function isPlainDetails(details: unknown): details is Record<string, unknown> {
  return typeof details === "object" && details !== null && !Array.isArray(details);
}
