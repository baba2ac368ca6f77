/**
 * The dev console, `/__app/dev` (dev mode only; without dev mode the path is not routed and
 * answers 404 like any missing file). The page is static (`assets/dev-console/` at the
 * package root) and talks to the server only through `window.xserver.server.core.*`, so it
 * gets the session cookie and the CSRF bootstrap like any viewer page.
 */
import { readFile } from "node:fs/promises";
import { dirname, join } from "node:path";
import { fileURLToPath } from "node:url";
import type { FastifyInstance } from "fastify";
import type { SessionSigner } from "../auth/session.js";
import type { HeaderSettings } from "../config/resolve.js";
import { closeWhenBodyIgnored } from "../http/lingering-close.js";
import { newNonce, PagePolicy } from "../http/security-headers.js";
import { ensureSession, injectBootstrap } from "./viewer-page.js";

export const DEV_CONSOLE_PATH = "/__app/dev";
const ASSETS_DIR = join(dirname(fileURLToPath(import.meta.url)), "..", "..", "assets", "dev-console");

/** The page's own files, by the name in its URL: a fixed list, never a path from the request. */
const ASSETS = new Map([
  ["console.js", "text/javascript; charset=utf-8"],
  ["console.css", "text/css; charset=utf-8"],
]);

export interface DevConsoleOptions {
  dev: boolean;
  sessions: SessionSigner;
  config: { trustProxy: boolean; headers: HeaderSettings };
}

export async function devConsoleRoutes(app: FastifyInstance, options: DevConsoleOptions): Promise<void> {
  if (!options.dev) return;
  closeWhenBodyIgnored(app);

  // The console is never framed (X-Frame-Options for browsers without CSP's frame-ancestors).
  const policy = PagePolicy.from(options.config.headers, [["frame-ancestors", ["'none'"]]]);
  app.get(DEV_CONSOLE_PATH, async (request, reply) => {
    const session = ensureSession(request, reply, options.sessions, options.config.trustProxy);
    const nonce = policy?.usesNonce ? newNonce() : null;
    policy?.apply(reply, nonce);
    // Read at each request: it is dev mode, and an edited asset shows at the next reload.
    const html = injectBootstrap(await readFile(join(ASSETS_DIR, "index.html"), "utf8"), options.sessions.csrfToken(session), nonce);
    return reply.header("cache-control", "no-store").header("x-frame-options", "DENY").type("text/html; charset=utf-8").send(html);
  });

  app.get<{ Params: { asset: string } }>(`${DEV_CONSOLE_PATH}/:asset`, async (request, reply) => {
    const type = ASSETS.get(request.params.asset);
    if (type === undefined) return reply.callNotFound();
    const body = await readFile(join(ASSETS_DIR, request.params.asset), "utf8");
    return reply.header("cache-control", "no-store").type(type).send(body);
  });
}
