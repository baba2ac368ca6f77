// Server methods of the "hello" plugin: every exported function is one, called from the
// page as xserver.plugin.hello.<name>(input). This file never reaches the browser.
import type { MethodPolicy, RpcContext } from "@counterpart-viewer/server";

/** This plugin's section of app.config.json ("plugins": { "hello": … }). */
interface HelloConfig {
  greeting?: string;
}

export const policy: Record<string, MethodPolicy> = {
  // Public: callable without a session, for example by a health check.
  greet: { auth: { public: true } },
  // visit keeps the default: the viewer's session cookie and CSRF token are required.
};

export function greet(ctx: RpcContext<HelloConfig>, input: { name: string }): { message: string } {
  const name = String(input?.name ?? "").trim().slice(0, 80) || "stranger";
  return { message: `${ctx.config.greeting ?? "Hello"}, ${name}!` };
}

/** Counts this viewer's visits in its session data, which the server keeps between calls. */
export function visit(ctx: RpcContext<HelloConfig>): { visits: number } {
  // A session-bound method always has a session.
  const session = ctx.session!;
  const visits = (typeof session.visits === "number" ? session.visits : 0) + 1;
  session.visits = visits;
  return { visits };
}
