/**
 * Static serving (docs/reference/http-routes.md): `public/`, `/plugins/<id>/…`, `/modules/<id>/…`,
 * the viewer page with its injected bootstrap and CSP, and `/__app/client.js`; compressed
 * (compression.ts), with validators (ETag, Last-Modified) on files and none on pages.
 */
import { readFile, realpath, stat } from "node:fs/promises";
import { dirname, join, sep } from "node:path";
import { fileURLToPath } from "node:url";
import fastifyStatic from "@fastify/static";
import type { FastifyInstance, FastifyReply, FastifyRequest } from "fastify";
import type { SessionSigner } from "../auth/session.js";
import type { HeaderSettings } from "../config/resolve.js";
import type { ServerOnlyFiles } from "../discovery/server-only-files.js";
import { errorOf } from "../errors/http-error.js";
import { closeWhenBodyIgnored } from "../http/lingering-close.js";
import { sendError as sendHttpError } from "../http/send-error.js";
import { newNonce, PagePolicy } from "../http/security-headers.js";
import { isServerOnlyItemPath, mapStaticPath } from "./static-path.js";
import { compressAnswers } from "./compression.js";
import { CLIENT_SCRIPT_PATH, ensureSession, PageTemplate } from "./viewer-page.js";

const CLIENT_DIR = join(dirname(fileURLToPath(import.meta.url)), "..", "client");

/** What static serving needs from the server it is part of. */
export interface StaticRouteOptions {
  root: string;
  sessions: SessionSigner;
  serverOnlyFiles: ServerOnlyFiles;
  config: { trustProxy: boolean; headers: HeaderSettings };
}

export async function staticRoutes(app: FastifyInstance, options: StaticRouteOptions): Promise<void> {
  closeWhenBodyIgnored(app);
  const policy = PagePolicy.from(options.config.headers);
  // Two scopes, each with its own @fastify/static (`serve: false`: only `reply.sendFile`,
  // with ETag, Last-Modified, 304 and ranges, never a route of its own).
  await app.register(clientScriptRoutes);
  const publicDir = join(options.root, "public");
  const hasPublic = (await stat(publicDir).catch(() => null))?.isDirectory() === true;
  // A root with only plugins and modules is a valid app (a page served from elsewhere):
  // say once what that means, instead of the static library's '"root" path must exist'.
  if (!hasPublic) app.log.warn({ root: options.root }, `${options.root} has no public/ folder: no viewer page is served (GET / answers 404), only its plugins' and modules' files and methods`);
  await app.register(async (scope) => {
    await compressAnswers(scope);
    // Every sendFile below names its folder, so the default root is never read: the app
    // root stands in for a missing public/ only to keep the library from warning.
    await scope.register(fastifyStatic, { root: hasPublic ? publicDir : options.root, serve: false, dotfiles: "deny", index: false });

    const pages = new PageCache();
    const realBases = new Map<string, string>();
    // HEAD is routed here with GET rather than through Fastify's automatic HEAD route: that
    // route's last onSend hook fails on a null body (a 304's, compression.ts) and sets a
    // Content-Length of 0 for a buffered one, where a HEAD must carry GET's headers.
    const serve = async (request: FastifyRequest, reply: FastifyReply) => {
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
        const nonce = policy?.usesNonce ? newNonce() : null;
        policy?.apply(reply, nonce);
        const html = (await pages.read(file, info.mtimeMs, info.size)).render(options.sessions.csrfToken(session), nonce);
        // Each answer holds its own CSRF token and nonce: never stored, never answered 304.
        return reply.header("cache-control", "no-store").type("text/html; charset=utf-8").send(html);
      }
      return reply.sendFile(file.slice(lookup.base.length + 1), lookup.base);
    };
    scope.route({ method: ["GET", "HEAD"], url: "/*", exposeHeadRoute: false, handler: serve });
  });
}

/**
 * The browser client, served from its `.br` and `.gz` siblings that the build writes
 * (scripts/build.mjs) when the client accepts them. Compressed per request, its 28 KB cost
 * the server 0.6 to 0.8 ms of CPU an answer in gzip and 1.5 to 2.2 ms in brotli at quality
 * 4 (`npm run bench`, section static); sent from the build's file, about 0.1 ms, what a
 * bare @fastify/static takes to send the plain file. The build's brotli, at quality 11, is
 * 12 % smaller than quality 4's besides. A dist/ without the siblings serves the plain file.
 */
async function clientScriptRoutes(scope: FastifyInstance): Promise<void> {
  await scope.register(fastifyStatic, { root: CLIENT_DIR, serve: false, preCompressed: true, cacheControl: false });
  // `no-cache`: revalidated at each page load (a 304 while it is unchanged), so a new
  // version of the server never leaves an old client in the browser's cache.
  scope.get(CLIENT_SCRIPT_PATH, (_request, reply) => reply.header("cache-control", "no-cache").sendFile("client.js"));
  scope.get(`${CLIENT_SCRIPT_PATH}.map`, (_request, reply) => reply.sendFile("client.js.map"));
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
 * Server code and server-only data in a plugin's or module's folder (docs/reference/http-routes.md).
 * The URL's own name was checked already; the real path is checked again so that a symlink
 * named `ui.js` does not serve a `.ts` file or the `server/` folder, then the files server
 * code imports.
 */
function refusedInItem(real: { file: string; base: string }, options: StaticRouteOptions): boolean {
  return isServerOnlyItemPath(real.file.slice(real.base.length + 1).split(sep)) || options.serverOnlyFiles.refuses(real.file, real.base);
}

/** HTML pages by path, read and parsed again only when their mtime or size changes. */
class PageCache {
  readonly #pages = new Map<string, { mtimeMs: number; size: number; page: PageTemplate }>();

  async read(file: string, mtimeMs: number, size: number): Promise<PageTemplate> {
    const cached = this.#pages.get(file);
    if (cached && cached.mtimeMs === mtimeMs && cached.size === size) return cached.page;
    const page = PageTemplate.parse(await readFile(file, "utf8"));
    this.#pages.set(file, { mtimeMs, size, page });
    return page;
  }
}

function sendError(reply: FastifyReply, code: "BAD_PATH" | "NOT_FOUND") {
  return sendHttpError(reply, errorOf(code));
}
