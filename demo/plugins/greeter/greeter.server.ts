// A TypeScript server file: loaded with no build step. Every named export is an RPC method.
import type { MethodPolicy, RpcContext } from "@counterpart-viewer/server";

export const policy: Record<string, MethodPolicy> = {
  // Public: no session, no CSRF, no verifiers.
  ping: { auth: { public: true } },
  // Session-only (the default) with a small body limit.
  greet: { runtime: { maxBodyBytes: 4096 } },
  // Streaming: answers events as it goes (README "Streaming answers"). Like a chat model's
  // turn it spends a budget, so each viewer gets 5 stories a minute (README "Rate limits").
  tell: { runtime: { streaming: true, timeoutMs: 20_000, rateLimit: { points: 5, durationMs: 60_000, key: "session" } } },
};

export function ping(): { pong: true; at: string } {
  return { pong: true, at: new Date().toISOString() };
}

export function greet(ctx: RpcContext<{ greeting?: string }>, input?: { name?: unknown }): string {
  const greeting = ctx.config.greeting ?? "Hello";
  const name = typeof input?.name === "string" && input.name.trim() !== "" ? input.name.trim() : "viewer";
  return `${greeting}, ${name}!`;
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
