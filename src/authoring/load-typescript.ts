/**
 * The TypeScript compiler for `types` and `check`: the app's own copy first (the one its
 * editor and build use, so the answers agree), else one installed beside this package.
 * TypeScript is an optional peer dependency: serving an app never needs it.
 */
import { createRequire } from "node:module";
import { join } from "node:path";
import { pathToFileURL } from "node:url";
import { ToolkitError } from "./toolkit-error.js";

export type TypeScript = typeof import("typescript");

export async function loadTypeScript(root: string): Promise<TypeScript> {
  for (const base of [join(root, "package.json"), import.meta.url]) {
    let resolved: string;
    try {
      resolved = createRequire(base).resolve("typescript");
    } catch {
      continue;
    }
    const ts = await load(resolved);
    const [major = 0, minor = 0] = ts.versionMajorMinor.split(".").map(Number);
    // `module: "preserve"`, which mirrors the server's .ts loader, came with TypeScript 5.4.
    if (major < 5 || (major === 5 && minor < 4)) {
      throw new ToolkitError(`TypeScript ${ts.version} (${resolved}) is too old: the author's commands need 5.4 or later ("npm install --save-dev typescript@5")`);
    }
    return ts;
  }
  throw new ToolkitError(`TypeScript is not installed for ${root}: run "npm install --save-dev typescript" there`);
}

/**
 * require first: TypeScript ships as one CommonJS file of some 9 MB, and import() has Node
 * scan all of it for its export names before it runs, most of a second of every command on
 * Node 20. A copy published as ES modules only is imported.
 */
async function load(resolved: string): Promise<TypeScript> {
  let loaded: { default?: TypeScript } & TypeScript;
  try {
    loaded = createRequire(import.meta.url)(resolved) as { default?: TypeScript } & TypeScript;
  } catch (error) {
    if ((error as { code?: unknown }).code !== "ERR_REQUIRE_ESM") throw error;
    loaded = (await import(pathToFileURL(resolved).href)) as { default?: TypeScript } & TypeScript;
  }
  return loaded.default ?? loaded;
}
