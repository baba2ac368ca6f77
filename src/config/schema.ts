/**
 * The shape of app.config.json (README "Configuration"), validated once at start.
 * Objects are strict so that a misspelt key is an error naming its path rather than a
 * setting silently ignored. Verifier settings stay open: custom verifiers define their own.
 */
import { z } from "zod";

const positiveInt = z.number().int().positive();
const nonNegativeInt = z.number().int().nonnegative();

export const jwtSettingsSchema = z.strictObject({
  secret: z.string().optional(),
  secretEnv: z.string().optional(),
  issuer: z.string().optional(),
  audience: z.string().optional(),
  clockSkewSec: nonNegativeInt.optional(),
  // Only a real boolean: the string "true" must never switch forwarding on.
  forward: z.boolean().optional(),
  userClaimHeader: z.string().regex(/^[A-Za-z0-9!#$%&'*+.^_`|~-]+$/, "must be an HTTP header name").optional(),
});

const verifierContextSchema = z.strictObject({
  enabled: z.boolean().optional(),
  verifiers: z.record(z.string(), z.record(z.string(), z.unknown())).optional(),
  mode: z.enum(["all", "any"]).optional(),
});

const proxySchema = z.strictObject({
  baseUrl: z.url({ protocol: /^https?$/ }),
  headers: z.record(z.string(), z.string()).optional(),
  timeoutMs: positiveInt.optional(),
  auth: z
    .strictObject({
      enabled: z.boolean().optional(),
      // A list of names, or a map name → that verifier's settings (its `verifierConfig`).
      verifiers: z.union([z.array(z.string()), z.record(z.string(), z.record(z.string(), z.unknown()))]).optional(),
      mode: z.enum(["all", "any"]).optional(),
      jwt: jwtSettingsSchema.optional(),
    })
    .optional(),
});

const isolationSchema = z.strictObject({
  minThreads: nonNegativeInt.optional(),
  maxThreads: positiveInt.optional(),
  idleTimeoutMs: positiveInt.optional(),
  maxOldGenerationSizeMb: positiveInt.optional(),
  maxYoungGenerationSizeMb: positiveInt.optional(),
  stackSizeMb: positiveInt.optional(),
  /** After a timeout, how long a method has to settle once its signal fired before its worker is terminated. */
  abortGraceMs: nonNegativeInt.optional(),
});

export const rpcDefaultsSchema = z.strictObject({
  maxBodyBytes: positiveInt.optional(),
  timeoutMs: positiveInt.optional(),
  maxConcurrency: positiveInt.optional(),
  queueLimit: nonNegativeInt.optional(),
  isolation: isolationSchema.optional(),
});

export const configSchema = z.strictObject({
  server: z
    .strictObject({
      allowedOrigins: z.array(z.string()).optional(),
      trustProxy: z.boolean().optional(),
      shutdownTimeoutMs: positiveInt.optional(),
      session: z.strictObject({ ttlSec: positiveInt.optional() }).optional(),
      rpc: rpcDefaultsSchema.optional(),
      secure: z
        .strictObject({
          rpcVerifiers: z.record(z.string(), verifierContextSchema).optional(),
          rpcAuth: z.record(z.string(), verifierContextSchema).optional(),
          proxies: z.record(z.string(), proxySchema).optional(),
        })
        .optional(),
      auth: z.strictObject({ jwt: jwtSettingsSchema.optional() }).optional(),
      outbound: z
        .strictObject({
          allow: z.array(z.string()).optional(),
          timeoutMs: positiveInt.optional(),
        })
        .optional(),
      metrics: z
        .strictObject({
          enabled: z.boolean().optional(),
          // A bearer token an attacker could guess is no protection: at least 16 characters.
          token: z.string().min(16).optional(),
        })
        .optional(),
    })
    .optional(),
  plugins: z.record(z.string(), z.unknown()).optional(),
  modules: z.record(z.string(), z.unknown()).optional(),
});

export type AppConfigInput = z.input<typeof configSchema>;
export type AppConfigFile = z.output<typeof configSchema>;
export type JwtSettings = z.output<typeof jwtSettingsSchema>;
export type VerifierContext = z.output<typeof verifierContextSchema>;
export type ProxyConfig = z.output<typeof proxySchema>;
export type IsolationSettings = z.output<typeof isolationSchema>;
export type RpcDefaults = z.output<typeof rpcDefaultsSchema>;
