// A TypeScript server file: loaded with no build step. Every named export is an RPC method.
import type { MethodPolicy, RpcContext } from "counterpart";

export const policy: Record<string, MethodPolicy> = {
  // Public: no session, no CSRF, no verifiers.
  ping: { auth: { public: true } },
  // Session-only (the default) with a small body limit.
  greet: { runtime: { maxBodyBytes: 4096 } },
};

export function ping(): { pong: true; at: string } {
  return { pong: true, at: new Date().toISOString() };
}

export function greet(ctx: RpcContext, input?: { name?: unknown }): string {
  const greeting = (ctx.config as { greeting?: string }).greeting ?? "Hello";
  const name = typeof input?.name === "string" && input.name.trim() !== "" ? input.name.trim() : "viewer";
  return `${greeting}, ${name}!`;
}
