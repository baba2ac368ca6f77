/**
 * The one verifier runner, for RPC calls and proxied requests alike: runs the named
 * verifiers in order, in `all` mode (every one must pass) or `any` mode (one is enough).
 * A verifier passes by returning `true` or `{ ok: true, user? }`; anything else, or a
 * throw, fails it. Why one refused goes to the log with the request's id, never to the
 * client: a caller learns nothing about why a token failed.
 */
import type { Logger } from "../log/logger.js";
import type { VerifierResult } from "./verifier-types.js";
import type { VerifierRegistry } from "./verifier-registry.js";

export interface VerifierRun<Input> {
  names: readonly string[];
  mode: "all" | "any";
  registry: VerifierRegistry<(input: Input) => VerifierResult | Promise<VerifierResult>>;
  /** The argument one verifier is called with. */
  inputFor(name: string): Input;
  log: Logger;
  /** "rpc" or "proxy": names the log lines (`<path> verifier refused the call`). */
  path: "rpc" | "proxy";
  /** Every refusal line carries these: the request id and where the request was going. */
  logFields: Record<string, unknown>;
}

export interface VerifierVerdict {
  passed: boolean;
  /** The first `user` a passing verifier supplied, or null. */
  user: unknown;
}

const REFUSED = { rpc: "rpc verifier refused the call", proxy: "proxy verifier refused the request" } as const;

export async function runVerifiers<Input>(run: VerifierRun<Input>): Promise<VerifierVerdict> {
  let user: unknown = null;
  let passed = 0;
  for (const name of run.names) {
    const outcome = await runOne(name, run);
    if (outcome.ok) {
      passed += 1;
      user ??= outcome.user ?? null;
      if (run.mode === "any") return { passed: true, user };
    } else if (run.mode === "all") {
      return { passed: false, user: null };
    }
  }
  return { passed: passed > 0, user: passed > 0 ? user : null };
}

async function runOne<Input>(name: string, run: VerifierRun<Input>): Promise<{ ok: boolean; user?: unknown }> {
  const verifier = run.registry.get(name);
  if (!verifier) {
    run.log.error({ ...run.logFields, verifier: name }, `${run.path} verifier is not registered`);
    return { ok: false };
  }
  try {
    const result = await verifier(run.inputFor(name));
    if (result === true) return { ok: true };
    if (result && typeof result === "object" && result.ok === true) return { ok: true, user: result.user };
    run.log.info({ ...run.logFields, verifier: name }, REFUSED[run.path]);
  } catch (error) {
    const reason = (error as Error)?.message ?? String(error);
    const code = (error as { code?: unknown })?.code;
    run.log.info({ ...run.logFields, verifier: name, reason, reasonCode: typeof code === "string" ? code : undefined }, REFUSED[run.path]);
  }
  return { ok: false };
}
