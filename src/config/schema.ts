/**
 * Every zod schema of the server: the shape of app.config.json (README "Configuration"),
 * validated once at start, and a server file's `policy` export (src/discovery/policy.ts).
 * Objects are strict so that a misspelt key is an error naming its path rather than a
 * setting silently ignored. Verifier settings stay open: custom verifiers define their own.
 *
 * Written with zod/mini, and bundled with the parts of zod it uses into dist/config/schema.js
 * (scripts/build.mjs), so the server never loads the zod package: zod's full build is
 * about 60 modules and 1.5 MB of source, and loading it cost about 9 MB resident; the
 * bundled part costs about 1 MB. The messages are zod's English ones, as with `zod`.
 */
import * as z from "zod/mini";
import { en } from "zod/locales";
import { ERROR_CODES } from "../errors/codes.js";
import { isStandardSchema } from "../validation/standard-schema.js";

z.config(en());

const positiveInt = z.number().check(z.int(), z.positive());
const nonNegativeInt = z.number().check(z.int(), z.nonnegative());
// Durations become Node timers, which take at most 2^31 - 1 ms and turn anything longer
// into 1 ms: a "never" written as a huge number would fire at once instead.
const MAX_TIMER_MS = 2_147_483_647;
const timerMs = z.number().check(z.int(), z.positive(), z.lte(MAX_TIMER_MS, `must be at most ${MAX_TIMER_MS} ms`));
const nonNegativeTimerMs = z.number().check(z.int(), z.nonnegative(), z.lte(MAX_TIMER_MS, `must be at most ${MAX_TIMER_MS} ms`));

/**
 * An http: or https: URL. zod's own `z.url({ protocol })` answers "Invalid URL" both for
 * text that is no URL and for `htp://…`, which leaves the reader to spot the typo.
 */
const httpUrl = z.string().check(
  z.refine((value) => URL.canParse(value), 'must be an absolute URL, such as "https://api.example"'),
  z.refine((value) => !URL.canParse(value) || /^https?:$/.test(new URL(value).protocol), {
    error: (issue) => `must be http: or https:, not ${new URL(String(issue.input)).protocol}`,
  }),
);

export const jwtSettingsSchema = z.strictObject({
  secret: z.optional(z.string()),
  secretEnv: z.optional(z.string()),
  issuer: z.optional(z.string()),
  audience: z.optional(z.string()),
  clockSkewSec: z.optional(nonNegativeInt),
  // Only a real boolean: the string "true" must never switch forwarding on.
  forward: z.optional(z.boolean()),
  userClaimHeader: z.optional(z.string().check(z.regex(/^[A-Za-z0-9!#$%&'*+.^_`|~-]+$/, "must be an HTTP header name"))),
});

const verifierContextSchema = z.strictObject({
  enabled: z.optional(z.boolean()),
  verifiers: z.optional(z.record(z.string(), z.record(z.string(), z.unknown()))),
  mode: z.optional(z.enum(["all", "any"])),
});

/**
 * One rate limit (README "Runtime protections", "Rate limits"): `points` calls per
 * `durationMs` window for each caller `key` names. A deployment-wide window is counted by
 * Redis, which expires keys in whole seconds at the least: it must be at least 1 s long.
 */
const rateLimitSchema = z
  .strictObject({
    points: positiveInt,
    durationMs: timerMs,
    key: z.enum(["session", "user", "ip", "global"]),
    scope: z.optional(z.enum(["process", "deployment"])),
  })
  .check(
    z.refine((limit) => limit.scope !== "deployment" || limit.durationMs >= 1000, {
      message: 'must be at least 1000 ms with scope "deployment"',
      path: ["durationMs"],
    }),
  );

/** One limit, or a list that must all pass. */
export const rateLimitsSchema = z.union([rateLimitSchema, z.array(rateLimitSchema).check(z.minLength(1, "must list at least one limit"))]);

const proxySchema = z.strictObject({
  baseUrl: httpUrl,
  headers: z.optional(z.record(z.string(), z.string())),
  timeoutMs: z.optional(timerMs),
  /** Per alias, checked before the request body is read (docs/proxy.md "Rate limits"). */
  rateLimit: z.optional(rateLimitsSchema),
  auth: z.optional(
    z.strictObject({
      enabled: z.optional(z.boolean()),
      // A list of names, or a map name → that verifier's settings (its `verifierConfig`).
      verifiers: z.optional(z.union([z.array(z.string()), z.record(z.string(), z.record(z.string(), z.unknown()))])),
      mode: z.optional(z.enum(["all", "any"])),
      jwt: z.optional(jwtSettingsSchema),
    }),
  ),
});

const isolationSchema = z.strictObject({
  minThreads: z.optional(nonNegativeInt),
  maxThreads: z.optional(positiveInt),
  idleTimeoutMs: z.optional(timerMs),
  maxOldGenerationSizeMb: z.optional(positiveInt),
  maxYoungGenerationSizeMb: z.optional(positiveInt),
  stackSizeMb: z.optional(positiveInt),
  /** After a timeout, how long a method has to settle once its signal fired before its worker is terminated. */
  abortGraceMs: z.optional(nonNegativeTimerMs),
});

export const rpcDefaultsSchema = z.strictObject({
  /** Which functions of a server file are methods: every function export, or only those its `policy` names. */
  expose: z.optional(z.enum(["exports", "policy"])),
  maxBodyBytes: z.optional(positiveInt),
  timeoutMs: z.optional(timerMs),
  maxConcurrency: z.optional(positiveInt),
  queueLimit: z.optional(nonNegativeInt),
  isolation: z.optional(isolationSchema),
  /** A streaming answer sends `{"ping":true}` after this long without a line. */
  streamHeartbeatMs: z.optional(timerMs),
  /** Check results against their policy's `output` outside dev mode too (it always runs in dev mode and the testing kit). */
  validateOutput: z.optional(z.boolean()),
});

/** Tokens of the Referrer-Policy header (W3C Referrer Policy, section 3). */
export const REFERRER_POLICIES = [
  "no-referrer",
  "no-referrer-when-downgrade",
  "origin",
  "origin-when-cross-origin",
  "same-origin",
  "strict-origin",
  "strict-origin-when-cross-origin",
  "unsafe-url",
] as const;

// A source list entry is one token: a ";" or "," would start another directive or policy,
// and whitespace another source, so a config value could smuggle in a directive of its own
// (and a header value is ASCII).
// The keywords browsers only know quoted are refused bare: `self` would name a host "self".
const cspSource = z.string().check(
  z.regex(/^[\x21-\x2b\x2d-\x3a\x3c-\x7e]+$/, "must be one source: printable ASCII without spaces, \";\" or \",\""),
  z.refine((value) => !/^(?:self|none|unsafe-inline|unsafe-eval|unsafe-hashes|strict-dynamic|report-sample|wasm-unsafe-eval|nonce-.*|sha(?:256|384|512)-.*)$/.test(value), "keywords, nonces and hashes must be in single quotes, as in \"'self'\""),
);
/** The directives of CSP Level 3 that browsers act on; a misspelt one gets "did you mean". */
export const CSP_DIRECTIVES = [
  "default-src",
  "script-src",
  "script-src-elem",
  "script-src-attr",
  "style-src",
  "style-src-elem",
  "style-src-attr",
  "img-src",
  "font-src",
  "connect-src",
  "media-src",
  "object-src",
  "frame-src",
  "child-src",
  "worker-src",
  "manifest-src",
  "fenced-frame-src",
  "base-uri",
  "form-action",
  "frame-ancestors",
  "sandbox",
  "report-uri",
  "report-to",
  "upgrade-insecure-requests",
  "require-trusted-types-for",
  "trusted-types",
  "webrtc",
] as const;
const cspDirective = z.optional(z.union([z.literal(false), z.array(cspSource)]));
const cspDirectivesSchema = z.strictObject(Object.fromEntries(CSP_DIRECTIVES.map((name) => [name, cspDirective])) as Record<(typeof CSP_DIRECTIVES)[number], typeof cspDirective>);

const headersSchema = z.strictObject({
  /** `X-Content-Type-Options: nosniff` on every answer (default true). */
  noSniff: z.optional(z.boolean()),
  /** Referrer-Policy on every answer (default "same-origin"); false: none. */
  referrerPolicy: z.optional(z.union([z.literal(false), z.enum(REFERRER_POLICIES)])),
  /** The HTML pages' CSP: directives replace the defaults one by one (false drops one); false: no CSP. */
  contentSecurityPolicy: z.optional(
    z.union([
      z.literal(false),
      z.strictObject({
        directives: z.optional(cspDirectivesSchema),
        reportOnly: z.optional(z.boolean()),
      }),
    ]),
  ),
});

export const configSchema = z.strictObject({
  server: z.optional(
    z.strictObject({
      allowedOrigins: z.optional(z.array(z.string())),
      trustProxy: z.optional(z.boolean()),
      shutdownTimeoutMs: z.optional(timerMs),
      /** Exit at start when any plugin or module fails to load, instead of serving the rest. */
      strictStartup: z.optional(z.boolean()),
      /** The origin viewers reach the server at, behind proxies (`ctx.core.CORE.client.domain`). */
      publicOrigin: z.optional(httpUrl),
      /** Use a well-formed `X-Request-Id` the request brings (default true); false behind an edge that passes on what clients send. */
      requestId: z.optional(z.strictObject({ trustIncoming: z.optional(z.boolean()) })),
      /** Continue the W3C `traceparent` / `tracestate` a request brings (default true); false: every request starts its own trace. */
      traceContext: z.optional(z.strictObject({ trustIncoming: z.optional(z.boolean()) })),
      session: z.optional(
        z.strictObject({
          ttlSec: z.optional(positiveInt),
          /** Bytes of data one session may hold (names and JSON values). */
          maxDataBytes: z.optional(positiveInt),
          /** The in-memory store (index.js, and the cluster master): how many sessions and bytes it keeps before dropping the least recently used. */
          store: z.optional(z.strictObject({ maxEntries: z.optional(positiveInt), maxBytes: z.optional(positiveInt) })),
        }),
      ),
      /** Shared state: session data, circuit breakers, deployment-wide concurrency and rate limits for every process using this Redis. */
      redis: z.optional(
        z.strictObject({
          url: z.string().check(z.regex(/^rediss?:\/\//, "must be a redis:// or rediss:// URL")),
          /** Prepended to every key, so deployments may share one Redis. */
          keyPrefix: z.optional(z.string()),
          /** A command that takes longer counts as the store being unreachable. */
          commandTimeoutMs: z.optional(timerMs),
          /** How long a deployment-wide concurrency slot outlives a process that died holding it. */
          leaseMs: z.optional(z.number().check(z.int(), z.gte(100, "must be at least 100 ms"), z.lte(MAX_TIMER_MS, `must be at most ${MAX_TIMER_MS} ms`))),
        }),
      ),
      rpc: z.optional(rpcDefaultsSchema),
      secure: z.optional(
        z.strictObject({
          rpcVerifiers: z.optional(z.record(z.string(), verifierContextSchema)),
          rpcAuth: z.optional(z.record(z.string(), verifierContextSchema)),
          proxies: z.optional(z.record(z.string(), proxySchema)),
          // The deployer tier of each item's secure config (merged over its server.json).
          plugins: z.optional(z.record(z.string(), z.record(z.string(), z.unknown()))),
          modules: z.optional(z.record(z.string(), z.record(z.string(), z.unknown()))),
        }),
      ),
      auth: z.optional(z.strictObject({ jwt: z.optional(jwtSettingsSchema) })),
      outbound: z.optional(
        z.strictObject({
          allow: z.optional(z.array(z.string())),
          timeoutMs: z.optional(timerMs),
        }),
      ),
      /** Security headers (README "Configuration", `server.headers`). */
      headers: z.optional(headersSchema),
      metrics: z.optional(
        z.strictObject({
          enabled: z.optional(z.boolean()),
          // A bearer token an attacker could guess is no protection: at least 16 characters.
          token: z.optional(z.string().check(z.minLength(16))),
        }),
      ),
    }),
  ),
  plugins: z.optional(z.record(z.string(), z.unknown())),
  modules: z.optional(z.record(z.string(), z.unknown())),
});

/** `PublicCheck` of src/discovery/policy.ts, which sits on a layer above this one and types the parsed entry itself. */
type PublicCheckFunction = (...args: never[]) => unknown;

const circuitBreakerSchema = z.strictObject({
  /** Default `kind/id/method`; a key given here is shared server-wide. */
  key: z.optional(z.string().check(z.minLength(1))),
  failureThreshold: z.optional(positiveInt),
  resetAfterMs: z.optional(timerMs),
});

/** The runtime fields, which an entry may also carry flat beside `auth` (the legacy form). */
const runtimeFields = {
  timeoutMs: z.optional(timerMs),
  maxBodyBytes: z.optional(positiveInt),
  // Zero means unlimited, as in the legacy form.
  maxConcurrency: z.optional(nonNegativeInt),
  queueLimit: z.optional(nonNegativeInt),
  concurrencyKey: z.optional(z.string().check(z.minLength(1))),
  /** Whose calls `maxConcurrency` counts: this process's, or every process's sharing `server.redis`. */
  concurrencyScope: z.optional(z.enum(["process", "deployment"])),
  circuitBreaker: z.optional(circuitBreakerSchema),
  /** Calls per window, per session, user, address or for everyone (README "Rate limits"). */
  rateLimit: z.optional(rateLimitsSchema),
};

const standardSchema = z.custom<unknown>(isStandardSchema, "must be a Standard Schema v1 validator (zod 3.24+, valibot 1, arktype 2…)");

const errorStatus = "must be an HTTP error status (400–599)";

/**
 * `errors` of a policy entry: `{ CODE: { status, message? } }`, answered by `throw
 * ctx.fail("CODE")`. A code is upper-case words, as the gateway's own, and never one of the
 * gateway's, so that a client can tell the two apart. Codes are checked here rather than
 * by a key schema, whose failure zod reports only as "Invalid key in record".
 */
const declaredErrorsSchema = z
  .record(
    z.string(),
    z.strictObject({
      status: z.number().check(z.int(), z.gte(400, errorStatus), z.lte(599, errorStatus)),
      message: z.optional(z.string()),
    }),
  )
  .check(
    z.check((ctx) => {
      for (const code of Object.keys(ctx.value)) {
        const problem = !/^[A-Z][A-Z0-9_]*$/.test(code)
          ? "a code must be upper-case letters, digits and underscores, starting with a letter"
          : Object.hasOwn(ERROR_CODES, code)
            ? "is one of the gateway's own codes"
            : undefined;
        if (problem) ctx.issues.push({ code: "custom", message: problem, input: code, path: [code] });
      }
    }),
  );
/** `runtime.files` (README "Files and binary data"): MIME types or `type/*` patterns. */
const filesPolicySchema = z.strictObject({
  maxFiles: positiveInt,
  maxFileBytes: positiveInt,
  types: z.optional(z.array(z.string().check(z.regex(/^[a-z0-9!#$&^_.+-]+\/(?:\*|[a-z0-9!#$&^_.+-]+)$/i, "must be a MIME type or a type/* pattern")))),
});

/** One entry of a server file's `policy` export (`MethodPolicy` in src/discovery/policy.ts). */
export const methodPolicySchema = z.strictObject({
  /** Validates the method's argument (README "Server methods"). */
  input: z.optional(standardSchema),
  /** Validates the method's result (dev mode, the testing kit, `server.rpc.validateOutput`). */
  output: z.optional(standardSchema),
  errors: z.optional(declaredErrorsSchema),
  auth: z.optional(
    z.union([
      // `auth: false` is the legacy spelling of a public method.
      z.literal(false),
      z.strictObject({
        public: z.optional(z.union([z.boolean(), z.custom<PublicCheckFunction>((value) => typeof value === "function", "must be a boolean or a function")])),
        requireSession: z.optional(z.boolean()),
      }),
    ]),
  ),
  runtime: z.optional(
    z.strictObject({
      ...runtimeFields,
      isolation: z.optional(z.enum(["none", "worker"])),
      /** The method answers a stream of events (NDJSON) rather than one JSON body. */
      streaming: z.optional(z.boolean()),
      /** The method takes files: multipart/form-data bodies within these limits. */
      files: z.optional(filesPolicySchema),
    }),
  ),
  ...runtimeFields,
});

export type AppConfigInput = z.input<typeof configSchema>;
export type AppConfigFile = z.output<typeof configSchema>;
export type JwtSettings = z.output<typeof jwtSettingsSchema>;
export type VerifierContext = z.output<typeof verifierContextSchema>;
export type ProxyConfig = z.output<typeof proxySchema>;
export type RateLimitSettings = z.output<typeof rateLimitSchema>;
export type IsolationSettings = z.output<typeof isolationSchema>;
export type RpcDefaults = z.output<typeof rpcDefaultsSchema>;
export type HeadersConfig = z.output<typeof headersSchema>;
