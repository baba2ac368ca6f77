/**
 * Method policy (docs/guides/server-methods.md "Server methods" and "Runtime protections"): the `policy` export
 * of a server file, validated at start and merged with the server-wide defaults, so that
 * the request path only reads plain resolved numbers.
 */
import { StartupError } from "../errors/http-error.js";
import { DEFAULT_QUEUE_LIMIT, type RpcSettings } from "../config/resolve.js";
import { describeIssues } from "../config/config-issues.js";
import { methodPolicySchema } from "../config/schema.js";
import type { StandardSchemaV1 } from "../validation/standard-schema.js";
import { declaredErrorsOf, type DeclaredErrors } from "../validation/declared-errors.js";

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
  /** Default `kind/id/method`; a key given here is shared server-wide. */
  key?: string;
  /** Default 5. */
  failureThreshold?: number;
  /** Default 30 000. */
  resetAfterMs?: number;
}

/** The runtime fields an entry may also carry flat (the legacy form); `runtime` wins. */
export interface RuntimePolicyFields {
  timeoutMs?: number;
  maxBodyBytes?: number;
  /** 0 means unlimited. */
  maxConcurrency?: number;
  queueLimit?: number;
  /** Methods of one plugin or module with the same key share one gate, each checking its own `maxConcurrency`. */
  concurrencyKey?: string;
  /**
   * `"deployment"`: `maxConcurrency` counts the calls of every process sharing
   * `server.redis` (docs/guides/server-methods.md "Runtime protections"); without Redis it stays per process.
   */
  concurrencyScope?: ConcurrencyScope;
  circuitBreaker?: CircuitBreakerPolicy;
  /** One limit, or several that must all pass (docs/guides/server-methods.md "Rate limits"). */
  rateLimit?: RateLimit | readonly RateLimit[];
}

/**
 * `points` calls per `durationMs`, counted per method for each caller `key` names: the
 * session, the user (`ctx.user.sub`, else the session, else the address), the client
 * address (by the `trustProxy` rules), or everyone at once.
 */
export interface RateLimit {
  points: number;
  durationMs: number;
  key: RateLimitKey;
  /** `"deployment"`: counted by every process sharing `server.redis`. Default `"process"`. */
  scope?: ConcurrencyScope;
}

export type RateLimitKey = "session" | "user" | "ip" | "global";

/** A limit with its scope decided, as the request path reads it. */
export interface ResolvedRateLimit {
  readonly points: number;
  readonly durationMs: number;
  readonly key: RateLimitKey;
  readonly scope: ConcurrencyScope;
}

export type ConcurrencyScope = "process" | "deployment";

/** One declared error of a policy entry: `throw ctx.fail(code, details?)` answers it. */
export interface DeclaredErrorPolicy {
  /** 400–599. Below 500 it is no circuit-breaker failure. */
  status: number;
  /** Default: the code. */
  message?: string;
}

/** The `policy` entry for one method, as a method author writes it. */
export interface MethodPolicy extends RuntimePolicyFields {
  /**
   * A Standard Schema v1 validator (zod, valibot, arktype…) for the method's argument:
   * checked after the verifiers, before the breaker and the queue; the method receives
   * its output (docs/guides/server-methods.md "Server methods").
   */
  input?: StandardSchemaV1;
  /** Checks the result in dev mode, the testing kit, and with `server.rpc.validateOutput`. */
  output?: StandardSchemaV1;
  /** Codes the method may answer with `throw ctx.fail(code, details?)`. */
  errors?: Record<string, DeclaredErrorPolicy>;
  /** `false` is the legacy spelling of `{ public: true, requireSession: false }`. */
  auth?:
    | false
    | {
        public?: boolean | PublicCheck;
        requireSession?: boolean;
      };
  runtime?: RuntimePolicyFields & {
    isolation?: "none" | "worker";
    /** The method answers a stream of events rather than one JSON body. */
    streaming?: boolean;
    /** The method takes files (docs/guides/files.md). */
    files?: FilesPolicy;
  };
}

export interface FilesPolicy {
  maxFiles: number;
  maxFileBytes: number;
  /** MIME types or `type/*` patterns; absent means any. */
  types?: string[];
}

export interface ResolvedFiles extends FilesPolicy {
  /** The `args` field of a multipart body, or a plain JSON body, is bounded by the server's JSON limit. */
  argsMaxBytes: number;
}

export interface ResolvedBreaker {
  key: string;
  failureThreshold: number;
  resetAfterMs: number;
}

export interface ResolvedPolicy {
  public: boolean | PublicCheck;
  requireSession: boolean;
  timeoutMs: number;
  maxBodyBytes: number;
  maxConcurrency: number | undefined;
  queueLimit: number;
  concurrencyKey: string;
  concurrencyScope: ConcurrencyScope;
  isolation: "none" | "worker";
  streaming: boolean;
  circuitBreaker: ResolvedBreaker | undefined;
  /** Null when the method declares none: the gateway then has no step to run. */
  input: StandardSchemaV1 | null;
  output: StandardSchemaV1 | null;
  errors: DeclaredErrors | null;
  /** Undefined when the method has none: the gateway then skips the step altogether. */
  rateLimit: readonly ResolvedRateLimit[] | undefined;
  files: ResolvedFiles | undefined;
}

export const DEFAULT_BREAKER_THRESHOLD = 5;
const MIB = 1024 * 1024;
export const DEFAULT_BREAKER_RESET_MS = 30_000;

/** Validates one file's `policy` export; returns the entries by method name. */
export function readPolicyExport(value: unknown, file: string): Map<string, MethodPolicy> {
  const policies = new Map<string, MethodPolicy>();
  if (value === undefined) return policies;
  if (value === null || typeof value !== "object" || Array.isArray(value)) {
    throw new StartupError("STARTUP_ITEM_FAILED", `${file}: the policy export must be an object keyed by method name`);
  }
  for (const [name, entry] of Object.entries(value)) {
    const parsed = methodPolicySchema.safeParse(entry ?? {});
    if (!parsed.success) {
      // One line: the message names the item's failure, which is printed as one line.
      const problems = describeIssues(methodPolicySchema, parsed.error.issues, `policy.${name}`);
      throw new StartupError("STARTUP_ITEM_FAILED", `${file}: ${problems.join(" · ")}`);
    }
    policies.set(name, (entry ?? {}) as MethodPolicy);
  }
  return policies;
}

/**
 * `methodKey` is `kind/id/method`; `itemKey` is `kind/id`, the scope of a `concurrencyKey`
 * (two plugins choosing the same key never share a gate).
 */
export function resolvePolicy(policy: MethodPolicy | undefined, defaults: RpcSettings, methodKey: string, itemKey: string): ResolvedPolicy {
  const auth = policy?.auth === false ? { public: true, requireSession: false } : (policy?.auth ?? {});
  // The flat legacy fields first, `runtime` over them.
  const runtime = { ...pickRuntimeFields(policy), ...policy?.runtime };
  const limit = runtime.maxConcurrency ?? defaults.maxConcurrency;
  const breaker = runtime.circuitBreaker;
  const files = policy?.runtime?.files;
  return {
    public: auth.public ?? false,
    requireSession: auth.requireSession ?? true,
    timeoutMs: runtime.timeoutMs ?? defaults.timeoutMs,
    // A method taking files reads up to all of them and their args by default.
    maxBodyBytes: runtime.maxBodyBytes ?? (files ? files.maxFiles * files.maxFileBytes + MIB : defaults.maxBodyBytes),
    maxConcurrency: limit === undefined || limit <= 0 ? undefined : limit,
    queueLimit: runtime.queueLimit ?? defaults.queueLimit ?? DEFAULT_QUEUE_LIMIT,
    concurrencyKey: runtime.concurrencyKey === undefined ? methodKey : `${itemKey}/${runtime.concurrencyKey}`,
    concurrencyScope: runtime.concurrencyScope ?? "process",
    isolation: runtime.isolation ?? "none",
    streaming: runtime.streaming === true,
    circuitBreaker: breaker && {
      key: breaker.key ?? methodKey,
      failureThreshold: breaker.failureThreshold ?? DEFAULT_BREAKER_THRESHOLD,
      resetAfterMs: breaker.resetAfterMs ?? DEFAULT_BREAKER_RESET_MS,
    },
    input: policy?.input ?? null,
    output: policy?.output ?? null,
    errors: declaredErrorsOf(policy?.errors),
    rateLimit: resolveRateLimits(runtime.rateLimit),
    files: files && { ...files, argsMaxBytes: Math.min(defaults.maxBodyBytes, runtime.maxBodyBytes ?? defaults.maxBodyBytes) },
  };
}

/** The one list the request path reads, frozen: a method's and a proxy alias's alike. */
export function resolveRateLimits(value: RateLimit | readonly RateLimit[] | undefined): readonly ResolvedRateLimit[] | undefined {
  if (value === undefined) return undefined;
  const list = Array.isArray(value) ? (value as readonly RateLimit[]) : [value as RateLimit];
  return Object.freeze(list.map(({ points, durationMs, key, scope }) => Object.freeze({ points, durationMs, key, scope: scope ?? "process" })));
}

function pickRuntimeFields(policy: MethodPolicy | undefined): RuntimePolicyFields {
  if (!policy) return {};
  const out: RuntimePolicyFields = {};
  if (policy.timeoutMs !== undefined) out.timeoutMs = policy.timeoutMs;
  if (policy.maxBodyBytes !== undefined) out.maxBodyBytes = policy.maxBodyBytes;
  if (policy.maxConcurrency !== undefined) out.maxConcurrency = policy.maxConcurrency;
  if (policy.queueLimit !== undefined) out.queueLimit = policy.queueLimit;
  if (policy.concurrencyKey !== undefined) out.concurrencyKey = policy.concurrencyKey;
  if (policy.concurrencyScope !== undefined) out.concurrencyScope = policy.concurrencyScope;
  if (policy.circuitBreaker !== undefined) out.circuitBreaker = policy.circuitBreaker;
  if (policy.rateLimit !== undefined) out.rateLimit = policy.rateLimit;
  return out;
}
