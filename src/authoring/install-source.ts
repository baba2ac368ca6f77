/**
 * Where this copy of the server came from, so that `counterpart init` writes a dependency
 * `npm install` can satisfy (docs/guides/your-app.md). The package is not on the npm
 * registry yet: an app made from a clone or from a packed tarball that asked for
 * `^version` would answer 404 at its first `npm install`.
 *
 * - Not below a `node_modules` folder: a clone or an unpacked folder, so `file:<folder>`.
 * - Below one: npm's lockfile of that tree (the hidden `node_modules/.package-lock.json`,
 *   which `npx --package=<tgz>` also writes, or the project's `package-lock.json`) says what
 *   it was resolved from; a `file:` tarball or folder is depended on where it lies.
 * - Anything else (a registry URL, no lockfile): the registry, `^version`.
 */
import { readFileSync } from "node:fs";
import { dirname, isAbsolute, join, relative, resolve, sep } from "node:path";
import { fileURLToPath } from "node:url";

// dist/authoring/ → the package root, as src/authoring/ is in the source tree.
const PACKAGE_ROOT = resolve(dirname(fileURLToPath(import.meta.url)), "..", "..");

export type InstallSource = { kind: "registry" } | { kind: "file"; path: string };

export function installSource(packageRoot = PACKAGE_ROOT): InstallSource {
  const parts = packageRoot.split(sep);
  const first = parts.indexOf("node_modules");
  if (first === -1) return { kind: "file", path: packageRoot };
  const tree = parts.slice(0, first).join(sep) || sep;
  const key = parts.slice(first).join("/");
  for (const lock of [join(tree, "node_modules", ".package-lock.json"), join(tree, "package-lock.json")]) {
    const resolved = resolvedIn(lock, key);
    if (resolved === undefined) continue;
    if (!resolved.startsWith("file:")) return { kind: "registry" };
    const path = resolved.slice("file:".length);
    return { kind: "file", path: isAbsolute(path) ? path : resolve(tree, path) };
  }
  return { kind: "registry" };
}

/** The dependency spec for an app in `appDir`: `^version`, or `file:` relative to the app. */
export function dependencySpec(source: InstallSource, version: string, appDir: string): string {
  if (source.kind === "registry") return `^${version}`;
  const path = relative(appDir, source.path).split(sep).join("/");
  return `file:${path === "" ? "." : path}`;
}

function resolvedIn(lockFile: string, key: string): string | undefined {
  let lock: unknown;
  try {
    lock = JSON.parse(readFileSync(lockFile, "utf8"));
  } catch {
    return undefined;
  }
  const packages = (lock as { packages?: unknown }).packages;
  if (typeof packages !== "object" || packages === null || !Object.hasOwn(packages, key)) return undefined;
  const resolved = (packages as Record<string, { resolved?: unknown }>)[key]?.resolved;
  return typeof resolved === "string" ? resolved : undefined;
}
