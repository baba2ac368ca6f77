/**
 * Maps a request path to a file below one of the served folders (docs/reference/http-routes.md), or
 * refuses it. Decoding is done here, segment by segment, on the raw URL: a traversal
 * attempt (`..`, `%2e%2e`, encoded `/` or `\`, NUL) is refused before any path is joined.
 */
import { join, sep } from "node:path";

export type StaticLookup =
  /** `item`: `base` is a plugin's or module's folder, where server-only files are refused. */
  | { ok: true; base: string; relative: string; item: boolean }
  | { ok: false; status: 400 | 404 };

/** Name rules are case-insensitive: on a case-insensitive disk `x.SERVER.mjs` is the same
 * file as `x.server.mjs`, and `NODE_MODULES` the same folder. */
const SERVER_FILE_NAME = /\.server\./i;
/** TypeScript source is server code (browsers cannot run it). */
const TYPESCRIPT_SOURCE = /\.[cm]?ts$/i;
const SERVER_DATA_NAMES = new Set(["server.json", "package.json", "package-lock.json", "tsconfig.json"]);

/**
 * True for a path inside a plugin's or module's folder (its segments below that folder)
 * that is server code or server-only data whatever imports it: TypeScript source,
 * anything below the item's `server/` folder, and package or server settings files.
 */
export function isServerOnlyItemPath(segments: readonly string[]): boolean {
  if (segments.length > 0 && segments[0]!.toLowerCase() === "server") return true;
  const fileName = segments[segments.length - 1] ?? "";
  return TYPESCRIPT_SOURCE.test(fileName) || SERVER_DATA_NAMES.has(fileName.toLowerCase());
}

export function mapStaticPath(root: string, rawUrl: string): StaticLookup {
  const rawPath = rawUrl.split("?", 1)[0]!.split("#", 1)[0]!;
  const rawSegments = rawPath.split("/").slice(1);
  const segments: string[] = [];
  for (const raw of rawSegments) {
    if (/%2f|%5c|%00/i.test(raw)) return { ok: false, status: 400 };
    let segment: string;
    try {
      segment = decodeURIComponent(raw);
    } catch {
      return { ok: false, status: 400 };
    }
    if (segment.includes("\\") || segment.includes("\0") || segment.includes("/")) return { ok: false, status: 400 };
    if (segment === "." || segment === "..") return { ok: false, status: 400 };
    // Dotfiles (.env, .git) and installed packages are never served.
    if (segment.startsWith(".") || segment.toLowerCase() === "node_modules") return { ok: false, status: 404 };
    segments.push(segment);
  }
  const wantsIndex = segments.length === 0 || segments[segments.length - 1] === "";
  const clean = segments.filter((segment) => segment !== "");

  let base: string;
  let rest: string[];
  const item = clean[0] === "plugins" || clean[0] === "modules";
  if (item) {
    if (clean.length < 3) return { ok: false, status: 404 };
    base = join(root, clean[0]!, clean[1]!);
    rest = clean.slice(2);
    // Checked before `index.html` is appended, so that `/plugins/<id>/server/` is refused too.
    if (isServerOnlyItemPath(rest)) return { ok: false, status: 404 };
  } else {
    base = join(root, "public");
    rest = clean;
  }
  if (wantsIndex) rest = [...rest, "index.html"];
  const fileName = rest[rest.length - 1] ?? "";
  if (SERVER_FILE_NAME.test(fileName)) return { ok: false, status: 404 };
  const relative = rest.join("/");
  // Belt and braces: the joined path must still be below its base.
  if (!join(base, relative).startsWith(base + sep)) return { ok: false, status: 400 };
  return { ok: true, base, relative, item };
}
