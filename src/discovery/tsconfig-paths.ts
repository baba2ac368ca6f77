/**
 * The `compilerOptions.paths` and `baseUrl` that apply to a `.ts` file: those of the
 * tsconfig.json nearest above it, with what it `extends`, read as TypeScript reads them.
 * The module hooks (ts-resolution.ts) map a `.ts` file's imports by name through them.
 *
 * Each folder's answer and each tsconfig.json are read once for the life of the process:
 * imports are resolved at start and on each dev-mode reload, and no resolution should read
 * a file again. An edited tsconfig.json therefore takes effect on the next start.
 */
import { readFileSync } from "node:fs";
import { createRequire } from "node:module";
import { dirname, isAbsolute, join, resolve } from "node:path";
import { isFile } from "./is-file.js";
import { parseJsonWithComments } from "./jsonc.js";

interface PathSettings {
  /** Absolute. */
  baseUrl: string | undefined;
  /** Pattern → targets, and the folder of the tsconfig.json that sets them. */
  paths: { patterns: Record<string, string[]>; dir: string } | undefined;
}

/** Folder → the tsconfig.json nearest above it (null: none up to the filesystem root). */
const nearestConfig = new Map<string, string | null>();
/** tsconfig.json → its settings, or why it cannot be read. */
const settingsOf = new Map<string, PathSettings | Error>();

/**
 * The absolute paths, in order, that the import `specifier` (a name, not a relative path)
 * of a file in `dir` may mean, before extensions and `index` files are tried: each target
 * of the `paths` pattern that matches it best, then the name below `baseUrl`. Empty
 * without a tsconfig.json or when nothing matches; the caller then falls back to Node.
 */
export function mappedImportPaths(specifier: string, dir: string): string[] {
  const config = nearestTsconfig(dir);
  if (config === undefined) return [];
  const settings = readSettings(config, []);
  const found: string[] = [];
  if (settings.paths !== undefined) {
    const match = bestPattern(specifier, Object.keys(settings.paths.patterns));
    if (match !== undefined) {
      // TypeScript's rule: targets are relative to baseUrl when one is set.
      const base = settings.baseUrl ?? settings.paths.dir;
      for (const target of settings.paths.patterns[match.pattern]!) {
        found.push(resolve(base, target.replace("*", () => match.star)));
      }
    }
  }
  if (settings.baseUrl !== undefined) found.push(resolve(settings.baseUrl, specifier));
  return found;
}

function nearestTsconfig(start: string): string | undefined {
  const visited: string[] = [];
  let dir = start;
  let found: string | null;
  for (;;) {
    const known = nearestConfig.get(dir);
    if (known !== undefined) {
      found = known;
      break;
    }
    visited.push(dir);
    const candidate = join(dir, "tsconfig.json");
    if (isFile(candidate)) {
      found = candidate;
      break;
    }
    const parent = dirname(dir);
    if (parent === dir) {
      found = null;
      break;
    }
    dir = parent;
  }
  for (const folder of visited) nearestConfig.set(folder, found);
  return found ?? undefined;
}

/**
 * The settings of `file` over those of what it extends (later entries of an `extends`
 * list over earlier ones). `chain` holds the files that extend it, to refuse a loop.
 */
function readSettings(file: string, chain: readonly string[]): PathSettings {
  const known = settingsOf.get(file);
  if (known instanceof Error) throw known;
  if (known !== undefined) return known;
  if (chain.includes(file)) throw new Error(`${file} extends itself (through ${chain.join(", ")})`);
  let settings: PathSettings;
  try {
    settings = parseSettings(file, chain);
  } catch (error) {
    const failure = new Error(`cannot read ${file}: ${(error as Error).message}`, { cause: error });
    settingsOf.set(file, failure);
    throw failure;
  }
  settingsOf.set(file, settings);
  return settings;
}

function parseSettings(file: string, chain: readonly string[]): PathSettings {
  const raw = parseJsonWithComments(readFileSync(file, "utf8"), file) as { extends?: unknown; compilerOptions?: { baseUrl?: unknown; paths?: unknown } } | null;
  let settings: PathSettings = { baseUrl: undefined, paths: undefined };
  const bases = typeof raw?.extends === "string" ? [raw.extends] : Array.isArray(raw?.extends) ? raw.extends : [];
  for (const base of bases) {
    if (typeof base !== "string") continue;
    const inherited = readSettings(extendedFile(base, file), [...chain, file]);
    settings = { baseUrl: inherited.baseUrl ?? settings.baseUrl, paths: inherited.paths ?? settings.paths };
  }
  const options = raw?.compilerOptions;
  // Each is relative to the folder of the file that sets it, and replaces an inherited one.
  if (typeof options?.baseUrl === "string") settings.baseUrl = resolve(dirname(file), options.baseUrl);
  if (typeof options?.paths === "object" && options.paths !== null) {
    const patterns: Record<string, string[]> = {};
    for (const [pattern, targets] of Object.entries(options.paths)) {
      if (Array.isArray(targets)) patterns[pattern] = targets.filter((target): target is string => typeof target === "string");
    }
    settings.paths = { patterns, dir: dirname(file) };
  }
  return settings;
}

/** The file an `extends` entry of `file` names: a path, or a package's tsconfig as TypeScript finds it. */
function extendedFile(base: string, file: string): string {
  if (base.startsWith("./") || base.startsWith("../") || isAbsolute(base)) {
    const path = resolve(dirname(file), base);
    return isFile(path) || !isFile(`${path}.json`) ? path : `${path}.json`;
  }
  const require = createRequire(file);
  for (const candidate of [base, `${base}.json`, `${base}/tsconfig.json`]) {
    try {
      return require.resolve(candidate);
    } catch {
      // the next form
    }
  }
  throw new Error(`cannot find "${base}", which it extends`);
}

/**
 * The `paths` pattern that `specifier` matches best, TypeScript's way: a pattern without
 * `*` equal to it, else the `*` pattern with the longest text before the `*`.
 */
function bestPattern(specifier: string, patterns: readonly string[]): { pattern: string; star: string } | undefined {
  if (patterns.includes(specifier) && !specifier.includes("*")) return { pattern: specifier, star: "" };
  let best: { pattern: string; star: string; prefix: number } | undefined;
  for (const pattern of patterns) {
    const star = pattern.indexOf("*");
    // A pattern with more than one `*` is invalid to TypeScript and never matches.
    if (star === -1 || pattern.includes("*", star + 1)) continue;
    const prefix = pattern.slice(0, star);
    const suffix = pattern.slice(star + 1);
    if (specifier.length < prefix.length + suffix.length || !specifier.startsWith(prefix) || !specifier.endsWith(suffix)) continue;
    if (best === undefined || prefix.length > best.prefix) {
      best = { pattern, star: specifier.slice(prefix.length, specifier.length - suffix.length), prefix: prefix.length };
    }
  }
  return best;
}
