/**
 * Every zod schema of the server: the shape of app.config.json (docs/reference/configuration.md),
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

/**
 * What the reference says of a key: docs/reference/configuration.md and
 * docs/reference/policy.md are written from these by scripts/docs.mjs (`npm run docs`),
 * and a test fails when a key has none. `leaf`: listed as one row, its fields not
 * descended into; `keyName`: how the reference names a record's keys.
 */
export interface KeyDoc {
  description: string;
  default?: string;
  /** The type as the reference writes it, where the schema's own would say less. */
  type?: string;
  leaf?: boolean;
  keyName?: string;
}

/** A copy of `schema` carrying its reference text (zod's global registry holds it). */
function doc<T extends z.ZodMiniType>(schema: T, description: string, more: Omit<KeyDoc, "description"> = {}): T {
  return schema.check(z.meta({ description, ...more })) as T;
}

/** The registry `doc` writes to, for scripts/docs.mjs: this file is bundled with its own zod. */
export const keyDocs = z.globalRegistry;

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
  secret: doc(z.optional(z.string()), "the HS256 shared secret, at least 32 bytes"),
  secretEnv: doc(z.optional(z.string()), "the name of the environment variable that holds the secret, read at start"),
  issuer: doc(z.optional(z.string()), "expected `iss`"),
  audience: doc(z.optional(z.string()), "expected `aud`"),
  clockSkewSec: doc(z.optional(nonNegativeInt), "slack allowed for `exp` and `nbf`", { default: "0" }),
  // Only a real boolean: the string "true" must never switch forwarding on.
  forward: doc(z.optional(z.boolean()), "only `true` forwards `Authorization` upstream (proxies only)", { default: "false" }),
  userClaimHeader: doc(
    z.optional(z.string().check(z.regex(/^[A-Za-z0-9!#$%&'*+.^_`|~-]+$/, "must be an HTTP header name"))),
    "the upstream header that receives the token's `sub` (proxies only)",
  ),
});

const verifierContextSchema = z.strictObject({
  enabled: doc(z.optional(z.boolean()), "whether the context's verifiers run"),
  verifiers: doc(z.optional(z.record(z.string(), z.record(z.string(), z.unknown()))), "verifier name → its settings (its `verifierConfig`; `jwt`'s override `server.auth.jwt` key by key)", { leaf: true }),
  mode: doc(z.optional(z.enum(["all", "any"])), "`all`: every verifier must pass; `any`: one is enough", { default: '"all"' }),
});

/**
 * One rate limit (docs/guides/server-methods.md "Runtime protections", "Rate limits"): `points` calls per
 * `durationMs` window for each caller `key` names. A deployment-wide window is counted by
 * Redis, which expires keys in whole seconds at the least: it must be at least 1 s long.
 */
const rateLimitSchema = z
  .strictObject({
    points: doc(positiveInt, "calls allowed per window"),
    durationMs: doc(timerMs, "the window, in ms (at least 1000 with `scope: \"deployment\"`)"),
    key: doc(z.enum(["session", "user", "ip", "global"]), "whose calls one window counts: each session's, user's, address's, or everyone's together"),
    scope: doc(z.optional(z.enum(["process", "deployment"])), "`deployment`: counted on `server.redis` for every process sharing it", { default: '"process"' }),
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
  baseUrl: doc(httpUrl, "the upstream base: no query, fragment, user name or password (send credentials as a static header)"),
  headers: doc(z.optional(z.record(z.string(), z.string())), "static headers added to every upstream request, replacing a client header of the same name", { default: "{}", leaf: true }),
  timeoutMs: doc(z.optional(timerMs), "how long to wait for the upstream's response headers", { default: "30000" }),
  /** Per alias, checked before the request body is read (docs/guides/proxy.md "Rate limits"). */
  rateLimit: doc(z.optional(rateLimitsSchema), "at most `points` requests per `durationMs` through this alias for each caller `key` names (429 `PROXY_RATE_LIMITED`)"),
  auth: doc(
    z.optional(
      z.strictObject({
        enabled: doc(z.optional(z.boolean()), "whether the verifiers must pass before the request goes upstream"),
        // A list of names, or a map name → that verifier's settings (its `verifierConfig`).
        verifiers: doc(
          z.optional(z.union([z.array(z.string()), z.record(z.string(), z.record(z.string(), z.unknown()))])),
          "verifier names (`[\"jwt\"]`), or a map name → settings, each verifier getting its entry as `verifierConfig`",
          { default: "[]", leaf: true },
        ),
        mode: doc(z.optional(z.enum(["all", "any"])), "`all`: every verifier must pass; `any`: one is enough", { default: '"all"' }),
        jwt: doc(z.optional(jwtSettingsSchema), "overrides `server.auth.jwt` for this proxy, key by key", { default: "{}" }),
      }),
    ),
    "the verifiers a request must pass (docs/guides/proxy.md)",
  ),
});

const isolationSchema = z.strictObject({
  minThreads: doc(z.optional(nonNegativeInt), "worker threads kept warm", { default: "1" }),
  maxThreads: doc(z.optional(positiveInt), "worker threads at most", { default: "max(2, CPUs)" }),
  idleTimeoutMs: doc(z.optional(timerMs), "how long an idle thread above `minThreads` is kept"),
  maxOldGenerationSizeMb: doc(z.optional(positiveInt), "each thread's V8 old-generation heap limit"),
  maxYoungGenerationSizeMb: doc(z.optional(positiveInt), "each thread's V8 young-generation heap limit"),
  stackSizeMb: doc(z.optional(positiveInt), "each thread's stack size"),
  /** After a timeout, how long a method has to settle once its signal fired before its worker is terminated. */
  abortGraceMs: doc(z.optional(nonNegativeTimerMs), "after a timeout, how long a method has to settle once its signal fired before its worker is terminated and replaced", { default: "250" }),
});

export const rpcDefaultsSchema = z.strictObject({
  /** Which functions of a server file are methods: every function export, or only those its `policy` names. */
  expose: doc(z.optional(z.enum(["exports", "policy"])), "`\"exports\"`: every function export is a method; `\"policy\"`: only those the file's `policy` names", { default: '"exports"' }),
  maxBodyBytes: doc(z.optional(positiveInt), "the default of a method's `maxBodyBytes`", { default: "1048576 (1 MiB)" }),
  timeoutMs: doc(z.optional(timerMs), "the default of a method's `timeoutMs`", { default: "30000" }),
  maxConcurrency: doc(z.optional(positiveInt), "the default of a method's `maxConcurrency`", { default: "none" }),
  queueLimit: doc(z.optional(nonNegativeInt), "the default of a method's `queueLimit`", { default: "100" }),
  isolation: doc(z.optional(isolationSchema), "the pool of worker threads that runs methods with `isolation: \"worker\"`"),
  /** A streaming answer sends `{"ping":true}` after this long without a line. */
  streamHeartbeatMs: doc(z.optional(timerMs), "a streaming answer's `{\"ping\": true}` after this much silence (keep it under a third of the browser's `stallTimeoutMs`, 45 000)", { default: "15000" }),
  /** Check results against their policy's `output` outside dev mode too (it always runs in dev mode and the testing kit). */
  validateOutput: doc(z.optional(z.boolean()), "check results against their policy's `output` in production too (always on in dev mode and in the testing kit)", { default: "false" }),
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
  noSniff: doc(z.optional(z.boolean()), "`X-Content-Type-Options: nosniff` on every answer", { default: "true" }),
  /** Referrer-Policy on every answer (default "same-origin"); false: none. */
  referrerPolicy: doc(z.optional(z.union([z.literal(false), z.enum(REFERRER_POLICIES)])), "`Referrer-Policy` on every answer, or `false` for none", { default: '"same-origin"' }),
  /** The HTML pages' CSP: directives replace the defaults one by one (false drops one); false: no CSP. */
  contentSecurityPolicy: doc(
    z.optional(
      z.union([
        z.literal(false),
        z.strictObject({
          directives: doc(z.optional(cspDirectivesSchema), "CSP directive → its sources: one given replaces the default of that name, `false` drops one, others are added", { leaf: true }),
          reportOnly: doc(z.optional(z.boolean()), "send `Content-Security-Policy-Report-Only` instead", { default: "false" }),
        }),
      ]),
    ),
    "the pages' CSP, or `false` for none (\"Security headers\" below)",
  ),
});

export const configSchema = z.strictObject({
  server: z.optional(
    z.strictObject({
      allowedOrigins: doc(
        z.optional(z.array(z.string())),
        "origins (scheme, host and port, exactly) allowed to make session-bound calls besides the server's own; they also get CORS answers on `/__rpc` and `/proxy` (\"Cross-origin viewers\")",
        { default: "[]" },
      ),
      trustProxy: doc(z.optional(z.boolean()), "trust `X-Forwarded-Proto/-Host/-For` from a reverse proxy", { default: "false" }),
      shutdownTimeoutMs: doc(z.optional(timerMs), "how long SIGTERM waits for in-flight calls", { default: "10000" }),
      /** Exit at start when any plugin or module fails to load, instead of serving the rest. */
      strictStartup: doc(z.optional(z.boolean()), "exit at start when a plugin or module fails to load (false: it answers 503, the rest serves); `--strict`", { default: "false" }),
      /** The origin viewers reach the server at, behind proxies (`ctx.core.CORE.client.domain`). */
      publicOrigin: doc(z.optional(httpUrl), "the origin viewers reach the server at, behind proxies: `ctx.core.client.domain`, a route's `origin`"),
      /** Use a well-formed `X-Request-Id` the request brings (default true); false behind an edge that passes on what clients send. */
      requestId: z.optional(
        z.strictObject({
          trustIncoming: doc(z.optional(z.boolean()), "use a well-formed incoming `X-Request-Id`; false: every request gets a new id (\"Log events\")", { default: "true" }),
        }),
      ),
      /** Continue the W3C `traceparent` / `tracestate` a request brings (default true); false: every request starts its own trace. */
      traceContext: z.optional(
        z.strictObject({
          trustIncoming: doc(z.optional(z.boolean()), "continue an incoming W3C `traceparent` / `tracestate`; false: every request starts its own trace (docs/guides/deployment.md \"Tracing\")", { default: "true" }),
        }),
      ),
      session: z.optional(
        z.strictObject({
          ttlSec: doc(z.optional(positiveInt), "session lifetime", { default: "28800" }),
          /** Bytes of data one session may hold (names and JSON values). */
          maxDataBytes: doc(z.optional(positiveInt), "session data one session may hold (names and JSON values); over it 413 `SESSION_DATA_TOO_LARGE`", { default: "65536" }),
          /** The in-memory store (index.js, and the cluster master): how many sessions and bytes it keeps before dropping the least recently used. */
          store: z.optional(
            z.strictObject({
              maxEntries: doc(z.optional(positiveInt), "sessions the in-memory store of `index.js` and of a cluster's master keeps before dropping the least recently used", { default: "10000" }),
              maxBytes: doc(z.optional(positiveInt), "bytes that store keeps", { default: "67108864 (64 MiB)" }),
            }),
          ),
        }),
      ),
      /** Shared state: session data, circuit breakers, deployment-wide concurrency and rate limits for every process using this Redis. */
      redis: z.optional(
        z.strictObject({
          url: doc(
            z.string().check(z.regex(/^rediss?:\/\//, "must be a redis:// or rediss:// URL")),
            "`redis://` or `rediss://` (TLS) URL, with `user:password@` and `/db` if needed: session data, circuit breakers, `concurrencyScope: \"deployment\"` and `rateLimit` with `scope: \"deployment\"` shared by every process using it (docs/guides/deployment.md \"Shared state and Redis\"). Only its host and port are ever logged. Unset: all of it stays per process",
          ),
          /** Prepended to every key, so deployments may share one Redis. */
          keyPrefix: doc(z.optional(z.string()), "put in front of every key and of the pub/sub channel, so that deployments may share one Redis", { default: '"counterpart:"' }),
          /** A command that takes longer counts as the store being unreachable. */
          commandTimeoutMs: doc(z.optional(timerMs), "a command without an answer by then counts as Redis unreachable: the call that needed it answers 503 `SESSION_STORE_UNAVAILABLE`", { default: "1000" }),
          /** How long a deployment-wide concurrency slot outlives a process that died holding it. */
          leaseMs: doc(
            z.optional(z.number().check(z.int(), z.gte(100, "must be at least 100 ms"), z.lte(MAX_TIMER_MS, `must be at most ${MAX_TIMER_MS} ms`))),
            "the lease of a deployment-wide concurrency slot (at least 100), refreshed three times per lease while held: how long the slots of a process that died stay taken",
            { default: "10000" },
          ),
        }),
      ),
      rpc: doc(z.optional(rpcDefaultsSchema), "server-wide defaults of the policy's runtime fields, and the `isolation` pool"),
      secure: z.optional(
        z.strictObject({
          rpcVerifiers: doc(z.optional(z.record(z.string(), verifierContextSchema)), "verifier contexts, by name (`default` and the names policies give)", { keyName: "<context>" }),
          rpcAuth: doc(z.optional(z.record(z.string(), verifierContextSchema)), "the legacy alias of `rpcVerifiers` (set one)", { keyName: "<context>" }),
          proxies: doc(z.optional(z.record(z.string(), proxySchema)), "proxy upstreams, by alias (docs/guides/proxy.md)", { keyName: "<alias>" }),
          // The deployer tier of each item's secure config (merged over its server.json).
          plugins: doc(z.optional(z.record(z.string(), z.record(z.string(), z.unknown()))), "the deployer tier of that plugin's secure config (\"Secure config\")", { keyName: "<id>", leaf: true }),
          modules: doc(z.optional(z.record(z.string(), z.record(z.string(), z.unknown()))), "the deployer tier of that module's secure config", { keyName: "<id>", leaf: true }),
        }),
      ),
      auth: z.optional(z.strictObject({ jwt: doc(z.optional(jwtSettingsSchema), "global settings of the built-in `jwt` verifier, which a proxy's `auth.jwt` or a context's `verifiers.jwt` override key by key") })),
      outbound: z.optional(
        z.strictObject({
          allow: doc(z.optional(z.array(z.string())), "`host` or `host:port` entries the SSRF guard exempts from the address block (docs/guides/outbound-guard.md)", { default: "[]" }),
          timeoutMs: doc(z.optional(timerMs), "the outbound guard's time limit", { default: "30000" }),
        }),
      ),
      /** Security headers (docs/reference/configuration.md "Security headers"). */
      headers: z.optional(headersSchema),
      metrics: z.optional(
        z.strictObject({
          enabled: doc(z.optional(z.boolean()), "serve `GET /metrics` (docs/reference/metrics.md)", { default: "false" }),
          // A bearer token an attacker could guess is no protection: at least 16 characters.
          token: doc(z.optional(z.string().check(z.minLength(16))), "the bearer token `/metrics` demands (at least 16 characters)"),
        }),
      ),
    }),
  ),
  plugins: doc(z.optional(z.record(z.string(), z.unknown())), "handed to that plugin's methods as `ctx.config` and to its boot hook (an id with no such folder: a warning at start)", { keyName: "<id>", leaf: true }),
  modules: doc(z.optional(z.record(z.string(), z.unknown())), "the same for a module", { keyName: "<id>", leaf: true }),
});

/** `PublicCheck` of src/discovery/policy.ts, which sits on a layer above this one and types the parsed entry itself. */
type PublicCheckFunction = (...args: never[]) => unknown;

const circuitBreakerSchema = z.strictObject({
  /** Default `kind/id/method`; a key given here is shared server-wide. */
  key: doc(z.optional(z.string().check(z.minLength(1))), "methods sharing a key share one breaker, server-wide (with `server.redis`, deployment-wide)", { default: "`kind/id/method`" }),
  failureThreshold: doc(z.optional(positiveInt), "consecutive failures that open the breaker", { default: "5" }),
  resetAfterMs: doc(z.optional(timerMs), "how long an open breaker refuses calls before one trial call runs", { default: "30000" }),
});

/** The runtime fields, which an entry may also carry flat beside `auth` (the legacy form). */
const runtimeFields = {
  timeoutMs: doc(z.optional(timerMs), "two budgets of this length: one for the checks, the body, the verifiers and an `input` schema (408 `RPC_BODY_TIMEOUT` while the body is still arriving, else 504), then one for the queue wait and the method together: 504 `RPC_TIMEOUT`", { default: "`server.rpc.timeoutMs` (30000)" }),
  maxBodyBytes: doc(z.optional(positiveInt), "larger bodies answer 413 before they are read (Content-Length) or as soon as they pass the limit (chunked)", { default: "`server.rpc.maxBodyBytes` (1 MiB)" }),
  // Zero means unlimited, as in the legacy form.
  maxConcurrency: doc(z.optional(nonNegativeInt), "calls of the same key running at once (0: no limit); the rest wait in a FIFO queue", { default: "none" }),
  queueLimit: doc(z.optional(nonNegativeInt), "waiting calls; the next is answered 429 `RPC_QUEUE_FULL` at once", { default: "100 with `maxConcurrency`" }),
  concurrencyKey: doc(z.optional(z.string().check(z.minLength(1))), "methods of one plugin or module sharing a key share one gate and queue; each call is held to its own method's `maxConcurrency` and `queueLimit`", { default: "the method" }),
  /** Whose calls `maxConcurrency` counts: this process's, or every process's sharing `server.redis`. */
  concurrencyScope: doc(z.optional(z.enum(["process", "deployment"])), "whose calls `maxConcurrency` counts: this process's, or with `\"deployment\"` every process's that shares `server.redis`", { default: '"process"' }),
  circuitBreaker: doc(z.optional(circuitBreakerSchema), "a breaker that refuses calls with 503 `RPC_CIRCUIT_OPEN` after consecutive failures", { default: "none" }),
  /** Calls per window, per session, user, address or for everyone (docs/guides/server-methods.md "Rate limits"). */
  rateLimit: doc(z.optional(rateLimitsSchema), "one limit, or a list that must all pass: at most `points` calls per `durationMs` for each caller `key` names; over it, 429 `RPC_RATE_LIMITED`", { default: "none" }),
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
/** `runtime.files` (docs/guides/files.md): MIME types or `type/*` patterns. */
const filesPolicySchema = z.strictObject({
  maxFiles: doc(positiveInt, "files one call may send (413 `RPC_TOO_MANY_FILES`)"),
  maxFileBytes: doc(positiveInt, "bytes one file may hold (413 `RPC_FILE_TOO_LARGE`)"),
  types: doc(z.optional(z.array(z.string().check(z.regex(/^[a-z0-9!#$&^_.+-]+\/(?:\*|[a-z0-9!#$&^_.+-]+)$/i, "must be a MIME type or a type/* pattern")))),
    "MIME types or `type/*` patterns a file may have (415 `RPC_BAD_FILE_TYPE`)",
    { default: "any type" },
  ),
});

/** One entry of a server file's `policy` export (`MethodPolicy` in src/discovery/policy.ts). */
export const methodPolicySchema = z.strictObject({
  /** Validates the method's argument (docs/guides/server-methods.md "Server methods"). */
  input: doc(z.optional(standardSchema), "a validator of the argument; the method receives its output, and a bad input answers 400 `RPC_BAD_INPUT` (\"Validating input and output\")", { type: "Standard Schema v1 (zod 3.24+, valibot 1, arktype 2…)" }),
  /** Validates the method's result (dev mode, the testing kit, `server.rpc.validateOutput`). */
  output: doc(z.optional(standardSchema), "a validator of the result, checked in dev mode, the testing kit and with `server.rpc.validateOutput` (500 `RPC_BAD_RESULT`)", { type: "Standard Schema v1" }),
  errors: doc(z.optional(declaredErrorsSchema), "`{ CODE: { status, message? } }`: the method's own codes, answered by `throw ctx.fail(\"CODE\")`; upper-case words, never one of the gateway's", { keyName: "<CODE>", leaf: true }),
  auth: doc(
    z.optional(
      z.union([
        // `auth: false` is the legacy spelling of a public method.
        z.literal(false),
        z.strictObject({
          public: doc(
            z.optional(z.union([z.boolean(), z.custom<PublicCheckFunction>((value) => typeof value === "function", "must be a boolean or a function")])),
            "`true`: callable without a session; a function of `{ req, headers, session, kind, id, method }` decides per call (\"Exposing a method: authentication\")",
            { default: "false", type: "boolean or function" },
          ),
          requireSession: doc(z.optional(z.boolean()), "`false` with a non-public method: the verifier context's verifiers alone decide, no session (\"Exposing a method: authentication\")", { default: "true" }),
        }),
      ]),
    ),
    "who may call the method; `false` is xOpat's spelling of a public method",
    { default: "a viewer's session and CSRF token" },
  ),
  runtime: doc(
    z.optional(
      z.strictObject({
        ...runtimeFields,
        isolation: doc(z.optional(z.enum(["none", "worker"])), "`\"worker\"`: run in a pool of worker threads (`server.rpc.isolation`)", { default: '"none"' }),
        /** The method answers a stream of events (NDJSON) rather than one JSON body. */
        streaming: doc(z.optional(z.boolean()), "the method answers a stream of events (\"Streaming answers\"); its calls must send `X-APP-Rpc-Stream: 1`", { default: "false" }),
        /** The method takes files: multipart/form-data bodies within these limits. */
        files: doc(z.optional(filesPolicySchema), "the method takes files: multipart/form-data bodies within these limits (\"Files and binary data\")", { default: "none: 415 `RPC_FILES_NOT_ACCEPTED`" }),
      }),
    ),
    "limits and how the method runs; the same fields may also be written flat beside `auth` (the legacy form; `runtime` wins)",
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
