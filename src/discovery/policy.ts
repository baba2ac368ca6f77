/**
 * Method policy (README "Server methods" and "Runtime protections"): the `policy` export
 * of a server file, validated at start and merged with the server-wide defaults, so that
 * the request path only reads plain resolved numbers.
 */
import { StartupError } from "../errors/http-error.js";
import { DEFAULT_QUEUE_LIMIT, type RpcSettings } from "../config/resolve.js";
import { methodPolicySchema } from "../config/schema.js";

export interface PublicCheckInput {
  req: import("node:http").IncomingMessage;
  headers: import("node:http").IncomingHttpHeaders;
  session: { id: string } | null;
  kind: string;
  id: string;
  method: string;
}

export type PublicCheck = (input: PublicCheckInput) => boolean | Promise<boolean>;

export interface CircuitBreakerPolicy {
  key: string;
  failureThreshold: number;
  resetAfterMs: number;
}

/** The `policy` entry for one method, as a method author writes it. */
export interface MethodPolicy {
  auth?: {
    public?: boolean | PublicCheck;
    requireSession?: boolean;
  };
  runtime?: {
    timeoutMs?: number;
    maxBodyBytes?: number;
    maxConcurrency?: number;
    queueLimit?: number;
    /** Methods sharing a key share one concurrency limit and queue. */
    concurrencyKey?: string;
    isolation?: "none" | "worker";
    circuitBreaker?: CircuitBreakerPolicy;
  };
}

export interface ResolvedPolicy {
  public: boolean | PublicCheck;
  requireSession: boolean;
  timeoutMs: number;
  maxBodyBytes: number;
  maxConcurrency: number | undefined;
  queueLimit: number;
  concurrencyKey: string;
  isolation: "none" | "worker";
  circuitBreaker: CircuitBreakerPolicy | undefined;
}

/** Validates one file's `policy` export; returns the entries by method name. */
export function readPolicyExport(value: unknown, file: string): Map<string, MethodPolicy> {
  const policies = new Map<string, MethodPolicy>();
  if (value === undefined) return policies;
  if (value === null || typeof value !== "object" || Array.isArray(value)) {
    throw new StartupError(`${file}: the policy export must be an object keyed by method name`);
  }
  for (const [name, entry] of Object.entries(value)) {
    const parsed = methodPolicySchema.safeParse(entry ?? {});
    if (!parsed.success) {
      const issue = parsed.error.issues[0]!;
      throw new StartupError(`${file}: policy.${[name, ...issue.path.map(String)].join(".")}: ${issue.message}`);
    }
    policies.set(name, entry as MethodPolicy);
  }
  return policies;
}

export function resolvePolicy(policy: MethodPolicy | undefined, defaults: RpcSettings, methodKey: string): ResolvedPolicy {
  const auth = policy?.auth ?? {};
  const runtime = policy?.runtime ?? {};
  const maxConcurrency = runtime.maxConcurrency ?? defaults.maxConcurrency;
  return {
    public: auth.public ?? false,
    requireSession: auth.requireSession ?? true,
    timeoutMs: runtime.timeoutMs ?? defaults.timeoutMs,
    maxBodyBytes: runtime.maxBodyBytes ?? defaults.maxBodyBytes,
    maxConcurrency,
    queueLimit: runtime.queueLimit ?? defaults.queueLimit ?? DEFAULT_QUEUE_LIMIT,
    concurrencyKey: runtime.concurrencyKey ?? methodKey,
    isolation: runtime.isolation ?? "none",
    circuitBreaker: runtime.circuitBreaker,
  };
}
