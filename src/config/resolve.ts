/**
 * Turns the validated config file into the settings the server reads. Every map keyed by
 * a user-chosen name (context ids, proxy aliases, plugin ids) becomes a `Map`, so that a
 * lookup of `__proto__` or `toString` can never reach an inherited property.
 */
import { StartupError } from "../errors/http-error.js";
import type { AppConfigFile, HeadersConfig, IsolationSettings, JwtSettings, ProxyConfig, VerifierContext } from "./schema.js";
import { frozenCopy, secretLookingValues } from "./secure-config.js";

export interface RpcSettings {
  /** Which functions of a server file are methods (docs/guides/server-methods.md "Server methods"). */
  expose: "exports" | "policy";
  maxBodyBytes: number;
  timeoutMs: number;
  maxConcurrency: number | undefined;
  queueLimit: number | undefined;
  isolation: IsolationSettings;
  /** Silence after which a streaming answer sends a heartbeat line. */
  streamHeartbeatMs: number;
  /** Results are checked against their policy's `output` outside dev mode too. */
  validateOutput: boolean;
}

export interface SessionSettings {
  /** Bytes of data one session may hold: over it a call answers 413 SESSION_DATA_TOO_LARGE. */
  maxDataBytes: number;
  /** The in-memory store's bounds: the least recently used sessions go first. */
  maxEntries: number;
  maxBytes: number;
}

export interface RedisSettings {
  /** May carry a password: never logged. */
  url: string;
  keyPrefix: string;
  commandTimeoutMs: number;
  /** A deployment-wide slot's lease: refreshed while held, so it outlives a dead holder by at most this. */
  leaseMs: number;
}

/** `server.headers`, with the defaults filled in (docs/reference/configuration.md). */
export interface HeaderSettings {
  noSniff: boolean;
  referrerPolicy: string | false;
  /** The pages' policy before its per-response nonce; null: pages carry no CSP. */
  contentSecurityPolicy: { directives: ReadonlyMap<string, readonly string[]>; reportOnly: boolean } | null;
}

/**
 * The pages' CSP unless configured otherwise. It restricts what an injected script needs —
 * running (script-src: this origin's files and the response's nonce), plugins (object-src),
 * rewriting relative URLs (base-uri) — and who may frame the page, and leaves images,
 * styles and connections alone: a viewer loads tiles and data from other hosts, and which
 * ones only its deployer knows.
 */
export const DEFAULT_CSP_DIRECTIVES: ReadonlyArray<readonly [string, readonly string[]]> = [
  ["script-src", ["'self'"]],
  ["object-src", ["'none'"]],
  ["base-uri", ["'self'"]],
  ["frame-ancestors", ["'self'"]],
];

export interface ResolvedConfig {
  allowedOrigins: ReadonlySet<string>;
  trustProxy: boolean;
  shutdownTimeoutMs: number;
  /** Exit at start when a plugin or module fails to load. */
  strictStartup: boolean;
  /** `server.publicOrigin`, or null. */
  publicOrigin: string | null;
  /** `server.requestId`: whether a well-formed incoming `X-Request-Id` is used. */
  requestId: { trustIncoming: boolean };
  /** `server.traceContext`: whether an incoming `traceparent` is continued. */
  traceContext: { trustIncoming: boolean };
  sessionTtlSec: number;
  session: SessionSettings;
  /** `null` without `server.redis`: state then stays in this process (or the cluster's master). */
  redis: RedisSettings | null;
  rpc: RpcSettings;
  /** `null` when neither `rpcVerifiers` nor `rpcAuth` is configured. */
  rpcVerifiers: ReadonlyMap<string, VerifierContext> | null;
  proxies: ReadonlyMap<string, ProxyConfig>;
  jwt: JwtSettings;
  outbound: { allow: readonly string[]; timeoutMs: number };
  metrics: { enabled: boolean; token: string | undefined };
  headers: HeaderSettings;
  /** The `plugins.<id>` / `modules.<id>` section, deep-frozen. */
  itemConfig(kind: "plugin" | "module", id: string): unknown;
  /** The deployer tier of an item's secure config (`server.secure.plugins|modules.<id>`), frozen, or undefined. */
  secureItemConfig(kind: "plugin" | "module", id: string): unknown;
  /** Every item the config has a section for, with that section's key path, so that one naming no real item can be reported. */
  configuredItems: ReadonlyArray<{ key: string; kind: "plugin" | "module"; id: string }>;
  /**
   * What plugin code may see of the verifier contexts (`ctx.secure.rpcVerifiers`): each
   * context's `enabled`, `mode` and verifier names, every verifier's settings emptied.
   */
  rpcVerifierView: Readonly<Record<string, unknown>>;
  /** Secret strings found in the config, kept out of logs. */
  secrets: readonly string[];
}

export const DEFAULT_MAX_BODY_BYTES = 1024 * 1024;
export const DEFAULT_SESSION_DATA_BYTES = 64 * 1024;
export const DEFAULT_SESSION_STORE_ENTRIES = 10_000;
export const DEFAULT_SESSION_STORE_BYTES = 64 * 1024 * 1024;
export const DEFAULT_TIMEOUT_MS = 30_000;
export const DEFAULT_QUEUE_LIMIT = 100;
export const DEFAULT_LEASE_MS = 10_000;
/** Under a third of the browser client's 45 s stall timeout, so two lost pings never stall a stream. */
export const DEFAULT_STREAM_HEARTBEAT_MS = 15_000;

export function resolveConfig(
  file: AppConfigFile,
  env: NodeJS.ProcessEnv,
  source: string,
  fromEnv: ReadonlySet<string> = new Set(),
): ResolvedConfig {
  const server = file.server ?? {};
  const secure = server.secure ?? {};
  if (secure.rpcVerifiers && secure.rpcAuth) {
    throw new StartupError(
      "STARTUP_CONFIG_INVALID",
      `${source}: server.secure.rpcVerifiers and its legacy alias server.secure.rpcAuth are both set; keep one`,
    );
  }
  const verifierEntries = secure.rpcVerifiers ?? secure.rpcAuth;
  const plugins = toMap(file.plugins);
  const modules = toMap(file.modules);
  const securePlugins = toSecureMap(secure.plugins);
  const secureModules = toSecureMap(secure.modules);
  const rpc = server.rpc ?? {};

  return {
    allowedOrigins: new Set((server.allowedOrigins ?? []).map(normaliseOrigin)),
    trustProxy: server.trustProxy ?? false,
    shutdownTimeoutMs: server.shutdownTimeoutMs ?? 10_000,
    strictStartup: server.strictStartup ?? false,
    publicOrigin: server.publicOrigin ? new URL(server.publicOrigin).origin : null,
    requestId: { trustIncoming: server.requestId?.trustIncoming ?? true },
    traceContext: { trustIncoming: server.traceContext?.trustIncoming ?? true },
    sessionTtlSec: server.session?.ttlSec ?? 8 * 3600,
    session: {
      maxDataBytes: server.session?.maxDataBytes ?? DEFAULT_SESSION_DATA_BYTES,
      maxEntries: server.session?.store?.maxEntries ?? DEFAULT_SESSION_STORE_ENTRIES,
      maxBytes: server.session?.store?.maxBytes ?? DEFAULT_SESSION_STORE_BYTES,
    },
    redis: server.redis
      ? {
          url: server.redis.url,
          keyPrefix: server.redis.keyPrefix ?? "counterpart:",
          commandTimeoutMs: server.redis.commandTimeoutMs ?? 1_000,
          leaseMs: server.redis.leaseMs ?? DEFAULT_LEASE_MS,
        }
      : null,
    rpc: {
      expose: rpc.expose ?? "exports",
      maxBodyBytes: rpc.maxBodyBytes ?? DEFAULT_MAX_BODY_BYTES,
      timeoutMs: rpc.timeoutMs ?? DEFAULT_TIMEOUT_MS,
      maxConcurrency: rpc.maxConcurrency,
      queueLimit: rpc.queueLimit,
      isolation: rpc.isolation ?? {},
      streamHeartbeatMs: rpc.streamHeartbeatMs ?? DEFAULT_STREAM_HEARTBEAT_MS,
      validateOutput: rpc.validateOutput ?? false,
    },
    rpcVerifiers: verifierEntries ? toMap(verifierEntries) : null,
    proxies: toMap(secure.proxies),
    jwt: server.auth?.jwt ?? {},
    outbound: { allow: server.outbound?.allow ?? [], timeoutMs: server.outbound?.timeoutMs ?? 30_000 },
    metrics: { enabled: server.metrics?.enabled ?? false, token: server.metrics?.token },
    headers: resolveHeaders(server.headers ?? {}),
    itemConfig(kind, id) {
      return (kind === "plugin" ? plugins : modules).get(id) ?? {};
    },
    secureItemConfig(kind, id) {
      return (kind === "plugin" ? securePlugins : secureModules).get(id);
    },
    configuredItems: [
      ...[...plugins.keys()].map((id) => ({ key: `plugins.${id}`, kind: "plugin" as const, id })),
      ...[...modules.keys()].map((id) => ({ key: `modules.${id}`, kind: "module" as const, id })),
      ...[...securePlugins.keys()].map((id) => ({ key: `server.secure.plugins.${id}`, kind: "plugin" as const, id })),
      ...[...secureModules.keys()].map((id) => ({ key: `server.secure.modules.${id}`, kind: "module" as const, id })),
    ],
    rpcVerifierView: verifierView(verifierEntries),
    secrets: collectSecrets(file, env, fromEnv),
  };
}

function resolveHeaders(headers: HeadersConfig): HeaderSettings {
  const csp = headers.contentSecurityPolicy ?? {};
  let contentSecurityPolicy: HeaderSettings["contentSecurityPolicy"] = null;
  if (csp !== false) {
    // A configured directive replaces the default of that name; `false` drops it.
    const directives = new Map<string, readonly string[]>(DEFAULT_CSP_DIRECTIVES);
    for (const [name, sources] of Object.entries(csp.directives ?? {})) {
      if (sources === false) directives.delete(name);
      else directives.set(name, sources);
    }
    contentSecurityPolicy = { directives, reportOnly: csp.reportOnly ?? false };
  }
  return { noSniff: headers.noSniff ?? true, referrerPolicy: headers.referrerPolicy ?? "same-origin", contentSecurityPolicy };
}

function toSecureMap(record: Record<string, unknown> | undefined): Map<string, unknown> {
  const map = new Map<string, unknown>();
  for (const [key, value] of Object.entries(record ?? {})) map.set(key, frozenCopy(value));
  return map;
}

function verifierView(contexts: Record<string, VerifierContext> | undefined): Readonly<Record<string, unknown>> {
  const view: Record<string, unknown> = {};
  for (const [name, context] of Object.entries(contexts ?? {})) {
    if (name === "__proto__" || name === "constructor" || name === "prototype") continue;
    const verifiers: Record<string, unknown> = {};
    for (const verifier of Object.keys(context.verifiers ?? {})) verifiers[verifier] = Object.freeze({});
    view[name] = Object.freeze({ enabled: context.enabled !== false, mode: context.mode ?? "all", verifiers: Object.freeze(verifiers) });
  }
  return Object.freeze(view);
}

function toMap<T>(record: Record<string, T> | undefined): Map<string, T> {
  const map = new Map<string, T>();
  for (const [key, value] of Object.entries(record ?? {})) map.set(key, deepFreeze(value));
  return map;
}

function deepFreeze<T>(value: T): T {
  if (value !== null && typeof value === "object" && !Object.isFrozen(value)) {
    Object.freeze(value);
    for (const item of Object.values(value)) deepFreeze(item);
  }
  return value;
}

function normaliseOrigin(origin: string): string {
  try {
    return new URL(origin).origin;
  } catch {
    return origin;
  }
}

/**
 * Values that must never be printed: everything substituted from `<% NAME %>`, JWT
 * secrets and the variables `secretEnv` names, static proxy header values.
 */
function collectSecrets(file: AppConfigFile, env: NodeJS.ProcessEnv, fromEnv: ReadonlySet<string>): string[] {
  const out = new Set<string>(fromEnv);
  const addJwt = (jwt: Record<string, unknown> | undefined) => {
    if (!jwt) return;
    if (typeof jwt.secret === "string") out.add(jwt.secret);
    if (typeof jwt.secretEnv === "string" && env[jwt.secretEnv]) out.add(env[jwt.secretEnv]!);
  };
  addJwt(file.server?.auth?.jwt);
  const secure = file.server?.secure;
  for (const context of Object.values(secure?.rpcVerifiers ?? secure?.rpcAuth ?? {})) {
    for (const settings of Object.values(context.verifiers ?? {})) addJwt(settings);
  }
  for (const proxy of Object.values(secure?.proxies ?? {})) {
    addJwt(proxy.auth?.jwt);
    for (const value of Object.values(proxy.headers ?? {})) out.add(value);
  }
  if (file.server?.metrics?.token) out.add(file.server.metrics.token);
  addUrlPassword(file.server?.redis?.url, out);
  secretLookingValues(secure?.plugins, out);
  secretLookingValues(secure?.modules, out);
  return [...out];
}

/** A Redis URL's password, as written and decoded, so that no log line can show it. */
function addUrlPassword(url: string | undefined, out: Set<string>): void {
  if (!url) return;
  let password = "";
  try {
    password = new URL(url).password;
  } catch {
    return;
  }
  if (password === "") return;
  out.add(password);
  try {
    out.add(decodeURIComponent(password));
  } catch {
    // not percent-encoded: the written form is enough
  }
}
