// A TypeScript server file: loaded with no build step. Every named export is an RPC method.
import { createHash } from "node:crypto";
import type { MethodPolicy, RpcContext, UploadedFile } from "@counterpart-viewer/server";

export const policy: Record<string, MethodPolicy> = {
  // Public: no session, no CSRF, no verifiers.
  ping: { auth: { public: true } },
  // Session-only (the default) with a small body limit.
  greet: { runtime: { maxBodyBytes: 4096 } },
  // Streaming: answers events as it goes (README "Streaming answers").
  tell: { runtime: { streaming: true, timeoutMs: 20_000 } },
  // Takes one text file up to 50 MB (README "Files and binary data").
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
