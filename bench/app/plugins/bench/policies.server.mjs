// The echo under the policy features of bench/validation.mjs and bench/ratelimit.mjs: each
// method returns its input like `echo`, so that the difference to `echo` is the feature.
import { z } from "zod";

/** The shape of the benchmark's body (bench/rpc.mjs BODY): what an author would declare for it. */
export const EchoInput = z.object({ message: z.string(), n: z.number(), ok: z.boolean() });

/** Never refuses in a benchmark round: what counting alone costs. */
const roomy = { points: 1_000_000_000, durationMs: 3_600_000, key: "session" };

export const policy = {
  echoZod: { input: EchoInput },
  echoLimited: { runtime: { rateLimit: roomy } },
  echoLimitedShared: { runtime: { rateLimit: { ...roomy, scope: "deployment" } } },
  // One call a day per session: after the first, every call is a 429.
  echoLimitedOut: { runtime: { rateLimit: { points: 1, durationMs: 86_400_000, key: "session" } } },
};

export function echoZod(_ctx, input) {
  return input;
}

export function echoLimited(_ctx, input) {
  return input;
}

export function echoLimitedShared(_ctx, input) {
  return input;
}

export function echoLimitedOut(_ctx, input) {
  return input;
}
