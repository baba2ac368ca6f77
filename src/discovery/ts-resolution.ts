/**
 * Which file an import of a `.ts` or `.mts` file means, as esbuild and TypeScript's
 * "bundler" resolution find it, since that is how such files are written and checked:
 * a relative path may leave out the extension or name a folder (its `index` file), a
 * `./x.js` means `./x.ts` when only that exists, and a name may be mapped by the
 * `paths` and `baseUrl` of the nearest tsconfig.json. Used by the module hooks
 * (ts-hooks.ts), which hand the file found to Node's own resolution.
 */
import { isBuiltin } from "node:module";
import { dirname, join } from "node:path";
import { fileURLToPath } from "node:url";
import { isFile } from "./is-file.js";
import { mappedImportPaths } from "./tsconfig-paths.js";

/** Tried in this order after a path without extension, then after `<path>/index`. */
export const MODULE_EXTENSIONS = [".ts", ".mts", ".js", ".mjs"] as const;

const RELATIVE = /^\.\.?(?:\/|$)/;
/** A URL (`file:`, `data:`, `node:`…), an absolute path or a package `#import`: Node's alone. */
const NOT_A_NAME = /^(?:[a-z][a-z\d+.-]*:|\/|#)/i;

/**
 * The absolute path of the file `specifier`, imported by the `.ts` file at `parentURL`,
 * means; undefined when Node's own resolution should decide (an import by a name that no
 * tsconfig.json maps, a built-in, a URL). A relative import that matches no file throws
 * an error that names both the import and the importing file.
 */
export function findTypeScriptImport(specifier: string, parentURL: string): string | undefined {
  if (RELATIVE.test(specifier)) {
    const url = new URL(specifier, parentURL);
    // `?query` and `#hash` are Node's business (and would not name a file).
    if (url.search !== "" || url.hash !== "") return undefined;
    const base = fileURLToPath(url);
    const found = findModuleFile(base);
    if (found !== undefined) return found;
    const tried = `${base}, ${base}{${MODULE_EXTENSIONS.join(",")}} or ${join(base, "index")}{${MODULE_EXTENSIONS.join(",")}}`;
    throw Object.assign(new Error(`Cannot find module "${specifier}" imported from ${fileURLToPath(parentURL)}: no file ${tried}`), {
      code: "ERR_MODULE_NOT_FOUND",
    });
  }
  if (NOT_A_NAME.test(specifier) || isBuiltin(specifier)) return undefined;
  for (const base of mappedImportPaths(specifier, dirname(fileURLToPath(parentURL)))) {
    const found = findModuleFile(base);
    if (found !== undefined) return found;
  }
  return undefined;
}

/** `base` itself, `x.ts` for `x.js` (`x.mts` for `x.mjs`), `base` + each extension, then its `index` file. */
function findModuleFile(base: string): string | undefined {
  if (isFile(base)) return base;
  const typescript = base.replace(/\.js$/, ".ts").replace(/\.mjs$/, ".mts");
  if (typescript !== base && isFile(typescript)) return typescript;
  for (const extension of MODULE_EXTENSIONS) if (isFile(base + extension)) return base + extension;
  for (const extension of MODULE_EXTENSIONS) {
    const index = join(base, `index${extension}`);
    if (isFile(index)) return index;
  }
  return undefined;
}
