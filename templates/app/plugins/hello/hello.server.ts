// Server methods of the "hello" plugin: every exported function is one, called from the
// page as xserver.plugin.hello.<name>(input). This file never reaches the browser.
import { z } from "zod";
import type { MethodPolicy, RpcContext } from "@counterpart-viewer/server";

/** This plugin's section of app.config.json ("plugins": { "hello": … }). */
interface HelloConfig {
  greeting?: string;
}

/**
 * What greet accepts. The server checks every call against it before the method runs
 * (anything else answers 400 RPC_BAD_INPUT) and hands the method its output: the name
 * trimmed, "" when the page sent none.
 */
const GreetInput = z.object({ name: z.string().trim().max(80).default("") });

export const policy: Record<string, MethodPolicy> = {
  // Public: callable without a session, for example by a health check.
  greet: { auth: { public: true }, input: GreetInput },
  // visit keeps the default: the viewer's session cookie and CSRF token are required.
};

export function greet(ctx: RpcContext<HelloConfig>, input: z.output<typeof GreetInput>): { message: string } {
  const name = input.name || "stranger";
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
