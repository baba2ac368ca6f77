/**
 * Static serving (README "HTTP routes"): `public/`, `/plugins/<id>/…`, `/modules/<id>/…`,
 * the viewer page with its injected bootstrap and `/__app/client.js`.
 */
import { readFile, realpath, stat } from "node:fs/promises";
import { dirname, join, sep } from "node:path";
import { fileURLToPath } from "node:url";
import fastifyStatic from "@fastify/static";
import type { FastifyInstance, FastifyReply } from "fastify";
import type { SessionSigner } from "../auth/session.js";
import type { ServerOnlyFiles } from "../discovery/server-only-files.js";
import { errorOf } from "../errors/http-error.js";
import { closeWhenBodyIgnored } from "../http/lingering-close.js";
import { sendError as sendHttpError } from "../http/send-error.js";
import { isServerOnlyItemPath, mapStaticPath } from "./static-path.js";
import { CLIENT_SCRIPT_PATH, ensureSession, injectBootstrap } from "./viewer-page.js";

const CLIENT_DIR = join(dirname(fileURLToPath(import.meta.url)), "..", "client");

/** What static serving needs from the server it is part of. */
export interface StaticRouteOptions {
  root: string;
  sessions: SessionSigner;
  serverOnlyFiles: ServerOnlyFiles;
  config: { trustProxy: boolean };
}

export async function staticRoutes(app: FastifyInstance, options: StaticRouteOptions): Promise<void> {
  // `serve: false`: only `reply.sendFile` (ETag, ranges, content types), never a route of its own.
  closeWhenBodyIgnored(app);
  await app.register(fastifyStatic, { root: join(options.root, "public"), serve: false, dotfiles: "deny", index: false });

  app.get(CLIENT_SCRIPT_PATH, (_request, reply) => reply.header("cache-control", "no-cache").sendFile("client.js", CLIENT_DIR));
  app.get(`${CLIENT_SCRIPT_PATH}.map`, (_request, reply) => reply.sendFile("client.js.map", CLIENT_DIR));

  const pages = new PageCache();
  const realBases = new Map<string, string>();
  app.get("/*", async (request, reply) => {
    const lookup = mapStaticPath(options.root, request.raw.url ?? "/");
    if (!lookup.ok) return sendError(reply, lookup.status === 400 ? "BAD_PATH" : "NOT_FOUND");
    let file = join(lookup.base, lookup.relative);
    let info = await stat(file).catch(() => null);
    if (info?.isDirectory()) {
      file = join(file, "index.html");
      info = await stat(file).catch(() => null);
    }
    if (!info?.isFile()) return sendError(reply, "NOT_FOUND");
    const real = await realPathInside(file, lookup.base, realBases);
    if (!real || (lookup.item && refusedInItem(real, options))) return sendError(reply, "NOT_FOUND");
    if (file.endsWith(".html")) {
      const session = ensureSession(request, reply, options.sessions, options.config.trustProxy);
      const html = injectBootstrap(await pages.read(file, info.mtimeMs, info.size), options.sessions.csrfToken(session));
      return reply.header("cache-control", "no-store").type("text/html; charset=utf-8").send(html);
    }
    return reply.sendFile(file.slice(lookup.base.length + 1), lookup.base);
  });
}

/**
 * A symlink inside a served folder must not lead outside it: the file's and its folder's
 * real paths, or null when the file is not inside. The folders' own real paths are
 * remembered (only folders that exist get there, so the map stays small).
 */
async function realPathInside(file: string, base: string, realBases: Map<string, string>): Promise<{ file: string; base: string } | null> {
  try {
    let realBase = realBases.get(base);
    if (realBase === undefined) {
      realBase = await realpath(base);
      realBases.set(base, realBase);
    }
    const realFile = await realpath(file);
    return realFile.startsWith(realBase + sep) ? { file: realFile, base: realBase } : null;
  } catch {
    return null;
  }
}

/**
 * Server code and server-only data in a plugin's or module's folder (README "HTTP routes").
 * The URL's own name was checked already; the real path is checked again so that a symlink
 * named `ui.js` does not serve a `.ts` file or the `server/` folder, then the files server
 * code imports.
 */
function refusedInItem(real: { file: string; base: string }, options: StaticRouteOptions): boolean {
  return isServerOnlyItemPath(real.file.slice(real.base.length + 1).split(sep)) || options.serverOnlyFiles.refuses(real.file, real.base);
}

/** HTML pages by path, read again only when their mtime or size changes. */
class PageCache {
  readonly #pages = new Map<string, { mtimeMs: number; size: number; text: string }>();

  async read(file: string, mtimeMs: number, size: number): Promise<string> {
    const cached = this.#pages.get(file);
    if (cached && cached.mtimeMs === mtimeMs && cached.size === size) return cached.text;
    const text = await readFile(file, "utf8");
    this.#pages.set(file, { mtimeMs, size, text });
    return text;
  }
}

function sendError(reply: FastifyReply, code: "BAD_PATH" | "NOT_FOUND") {
  return sendHttpError(reply, errorOf(code));
}
