/**
 * `counterpart init [dir]` (docs/guides/toolkit.md): copies the app template
 * (`templates/app/` in this package) into a new folder, with the app's name and its
 * dependency on this package filled in. It never overwrites: a folder that already holds anything
 * but a `.git` is refused.
 */
import { cp, mkdir, readFile, readdir, rename, writeFile } from "node:fs/promises";
import { basename, dirname, join, relative, resolve } from "node:path";
import { fileURLToPath } from "node:url";
import { ToolkitError } from "./toolkit-error.js";

// dist/authoring/ → the package root, as src/authoring/ is in the source tree.
const TEMPLATE = join(dirname(fileURLToPath(import.meta.url)), "..", "..", "templates", "app");
/** npm drops files named .gitignore from a package, so the template carries it without the dot. */
const RENAMED = new Map([["gitignore", ".gitignore"]]);
const TEXT = /\.(?:json|ts|js|mjs|html|css|md)$|^\.gitignore$/;

export interface ScaffoldOptions {
  /** The app's package name; default: made from the folder's name. */
  name?: string;
  /** The app's dependency on the server: `^version`, or a `file:` spec (src/authoring/install-source.ts). */
  serverSpec: string;
}

export interface Scaffolded {
  dir: string;
  name: string;
  /** Relative to `dir`, sorted. */
  files: string[];
}

export async function scaffoldApp(target: string, options: ScaffoldOptions): Promise<Scaffolded> {
  const dir = resolve(target);
  const name = options.name ?? packageNameFrom(basename(dir));
  if (!VALID_NAME.test(name) || RESERVED_NAMES.has(name)) throw new ToolkitError(`"${name}" is not a valid npm package name: use lowercase letters, digits, "-", "." and "_" (or pass --name)`);
  await refuseNonEmpty(dir);
  await mkdir(dir, { recursive: true });
  // Entry by entry: Node 24's cp() refuses a target folder that exists (an empty one, or
  // one holding only .git) when errorOnExist is set, where Node 20 and 22 copied into it.
  for (const entry of await readdir(TEMPLATE)) {
    await cp(join(TEMPLATE, entry), join(dir, entry), { recursive: true, errorOnExist: true, force: false });
  }
  const files: string[] = [];
  for (const file of await listFiles(dir)) {
    let path = file;
    const renamed = RENAMED.get(basename(file));
    if (renamed) {
      path = join(dirname(file), renamed);
      await rename(file, path);
    }
    if (TEXT.test(basename(path))) {
      const text = await readFile(path, "utf8");
      const filled = text.replaceAll("__APP_NAME__", name).replaceAll("__SERVER_SPEC__", JSON.stringify(options.serverSpec).slice(1, -1));
      if (filled !== text) await writeFile(path, filled);
    }
    files.push(relative(dir, path));
  }
  return { dir, name, files: files.sort() };
}

const VALID_NAME = /^(?:@[a-z0-9][a-z0-9._-]*\/)?[a-z0-9][a-z0-9._-]*$/;
/** Names npm refuses although they match the pattern. */
const RESERVED_NAMES = new Set(["node_modules", "favicon.ico"]);

/** "My Viewer App" → "my-viewer-app". */
export function packageNameFrom(folder: string): string {
  return folder
    .toLowerCase()
    .replace(/[^a-z0-9._-]+/g, "-")
    .replace(/^[._-]+|-+$/g, "")
    .slice(0, 214);
}

async function refuseNonEmpty(dir: string): Promise<void> {
  let entries: string[];
  try {
    entries = await readdir(dir);
  } catch (error) {
    if ((error as NodeJS.ErrnoException).code === "ENOENT") return;
    if ((error as NodeJS.ErrnoException).code === "ENOTDIR") throw new ToolkitError(`${dir} is not a folder: it, or a folder on its path, is a file`);
    throw error;
  }
  const taken = entries.filter((entry) => entry !== ".git");
  if (taken.length > 0) throw new ToolkitError(`${dir} is not empty (${taken.slice(0, 3).join(", ")}${taken.length > 3 ? ", …" : ""}); init writes into a new or empty folder only`);
}

async function listFiles(dir: string): Promise<string[]> {
  const out: string[] = [];
  for (const entry of await readdir(dir, { withFileTypes: true })) {
    // A .git may be a folder or, in a worktree or submodule, a file: either way not ours.
    if (entry.name === ".git") continue;
    const path = join(dir, entry.name);
    if (entry.isDirectory()) out.push(...(await listFiles(path)));
    else out.push(path);
  }
  return out;
}
