// A TypeScript server file: loaded with no build step. Every named export is an RPC method.
import type { MethodPolicy, RpcContext, StandardSchemaV1 } from "@counterpart-viewer/server";

/**
 * greet's input, checked by the server before the method runs (README "Validating input
 * and output"): anything else answers 400 RPC_BAD_INPUT, and the method gets the output,
 * the name trimmed ("" when none was sent). A policy takes any Standard Schema, the
 * interface zod, valibot and arktype implement (`z.object({ name: z.string().trim()
 * .max(100).default("") })` would do); the demo writes this one out so that `npm start`
 * loads no validator library (zod adds about 15 MB to the idle server, README "Benchmarks").
 */
const GreetInput: StandardSchemaV1<{ name?: string } | undefined, { name: string }> = {
  "~standard": {
    version: 1,
    vendor: "greeter",
    validate(value) {
      if (value === undefined) return { value: { name: "" } };
      if (typeof value !== "object" || value === null || Array.isArray(value)) return { issues: [{ message: "Expected an object", path: [] }] };
      const name = (value as { name?: unknown }).name ?? "";
      if (typeof name !== "string") return { issues: [{ message: "Expected a string", path: ["name"] }] };
      if (name.trim().length > 100) return { issues: [{ message: "At most 100 characters", path: ["name"] }] };
      return { value: { name: name.trim() } };
    },
  },
};

export const policy: Record<string, MethodPolicy> = {
  // Public: no session, no CSRF, no verifiers.
  ping: { auth: { public: true } },
  // Session-only (the default) with a small body limit, a checked input and one declared error.
  greet: {
    runtime: { maxBodyBytes: 4096 },
    input: GreetInput,
    errors: { NOBODY_TO_GREET: { status: 422, message: "Nobody is called that" } },
  },
  // Streaming: answers events as it goes (README "Streaming answers"). Like a chat model's
  // turn it spends a budget, so each viewer gets 5 stories a minute (README "Rate limits").
  tell: { runtime: { streaming: true, timeoutMs: 20_000, rateLimit: { points: 5, durationMs: 60_000, key: "session" } } },
};

export function ping(): { pong: true; at: string } {
  return { pong: true, at: new Date().toISOString() };
}

export function greet(ctx: RpcContext<{ greeting?: string }>, input: StandardSchemaV1.InferOutput<typeof GreetInput>): string {
  if (input.name.toLowerCase() === "nobody") throw ctx.fail("NOBODY_TO_GREET", { name: input.name });
  const greeting = ctx.config.greeting ?? "Hello";
  return `${greeting}, ${input.name || "viewer"}!`;
}

const STORY = "Once upon a time a viewer asked its server for a story, and the server told it word by word.";

/** Emits the story a word at a time, as a chat model would its tokens, then returns it whole. */
export async function tell(ctx: RpcContext<unknown, { index: number; word: string }>, input?: { delayMs?: unknown }): Promise<{ words: number; text: string }> {
  const delayMs = typeof input?.delayMs === "number" ? Math.min(Math.max(input.delayMs, 0), 1_000) : 120;
  const words = STORY.split(" ");
  for (const [index, word] of words.entries()) {
    await new Promise((resolve) => setTimeout(resolve, delayMs));
    ctx.signal.throwIfAborted();
    // Waits while the page reads slower than the method writes.
    await ctx.emit({ index, word });
  }
  return { words: words.length, text: STORY };
}
