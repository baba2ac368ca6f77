// A TypeScript server file: loaded with no build step. Every named export is an RPC method.
import { createHash } from "node:crypto";
import type { MethodPolicy, RpcContext, StandardSchemaV1, UploadedFile } from "@counterpart-viewer/server";

/**
 * greet's input, checked by the server before the method runs (docs/guides/server-methods.md "Validating input
 * and output"): anything else answers 400 RPC_BAD_INPUT, and the method gets the output,
 * the name trimmed ("" when none was sent). A policy takes any Standard Schema, the
 * interface zod, valibot and arktype implement (`z.object({ name: z.string().trim()
 * .max(100).default("") })` would do); the demo writes this one out so that `npm start`
 * loads no validator library (zod adds about 15 MB to the idle server, docs/reference/benchmarks.md).
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
  // Streaming: answers events as it goes (docs/guides/streaming.md). Like a chat model's
  // turn it spends a budget, so each viewer gets 5 stories a minute (docs/guides/server-methods.md "Rate limits").
  tell: { runtime: { streaming: true, timeoutMs: 20_000, rateLimit: { points: 5, durationMs: 60_000, key: "session" } } },
  // Takes one text file up to 50 MB (docs/guides/files.md).
  countLines: { runtime: { files: { maxFiles: 1, maxFileBytes: 50 * 1024 * 1024, types: ["text/*", "application/json", "application/octet-stream"] } } },
  // Answers a file instead of JSON.
  exportReport: {},
};

/** Reads the upload as it streams from the server's temporary file: lines and a SHA-256. */
export async function countLines(_ctx: RpcContext, input: { file: UploadedFile }): Promise<{ name: string; type: string; size: number; lines: number; sha256: string }> {
  const hash = createHash("sha256");
  let lines = 0;
  let last = 10;
  for await (const chunk of input.file.stream()) {
    hash.update(chunk);
    for (const byte of chunk) if (byte === 10) lines += 1;
    if (chunk.length > 0) last = chunk[chunk.length - 1]!;
  }
  // A last line without its newline still counts.
  if (input.file.size > 0 && last !== 10) lines += 1;
  return { name: input.file.name, type: input.file.type, size: input.file.size, lines, sha256: hash.digest("hex") };
}

/** A small text report, downloaded by the browser as report-<date>.txt. */
export function exportReport(ctx: RpcContext, input?: { title?: unknown }) {
  const title = typeof input?.title === "string" ? input.title.slice(0, 100) : "Viewer report";
  const day = new Date().toISOString().slice(0, 10);
  const text = `${title}\n${"=".repeat(title.length)}\nday: ${day}\nsession: ${ctx.session ? "yes" : "no"}\n`;
  return APP_SERVER.file(new TextEncoder().encode(text), { type: "text/plain; charset=utf-8", name: `report-${day}.txt` });
}

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
