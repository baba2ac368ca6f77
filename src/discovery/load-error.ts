/**
 * Why a server file did not load, as one line that points at the place to fix:
 * `file:line:column: what is wrong`, and a hint when the cause is a common one.
 *
 * Node's own errors rarely say where: an ESM syntax error caught from `import()` carries no
 * file or line at all (Node prints them only for an uncaught one), and a missing import
 * names the file it was looked for, not the line that asked for it. So the line of a
 * missing import is found in the importing file's source, and a syntax error is located by
 * parsing the server file and what it imports again with esbuild (only on this failure
 * path: a file that loads costs nothing here).
 */
import { readFile } from "node:fs/promises";
import { dirname, extname, isAbsolute, resolve, sep } from "node:path";
import { fileURLToPath } from "node:url";
import { quoteLine } from "./esbuild-service.js";
import { isFile } from "./is-file.js";
import { importGraph } from "./server-imports.js";

/** `/abs/file.ts:3:7: …`: a message that already starts with its place (the `.ts` loader's). */
const LOCATED = /^(?:\/|[A-Za-z]:[\\/]).*?:\d+:\d+: /;
/** This package's built modules (dist/), which a stack frame of the app's code is not. */
const PACKAGE_DIR = fileURLToPath(new URL("../", import.meta.url));

/** An Error whose message says where and why `file` (a server file or boot hook) failed to load; `cause` is the original. */
export async function explainLoadError(file: string, error: unknown): Promise<Error> {
  const message = await describe(file, error).catch(() => undefined);
  // Nothing to add (the .ts loader's errors are placed already): a wrapper would only print
  // the same text twice, since the log writes an error's message followed by its cause's.
  if (message === undefined || (error instanceof Error && message === error.message)) return error instanceof Error ? error : new Error(String(error));
  return new Error(message, { cause: error });
}

async function describe(file: string, error: unknown): Promise<string | undefined> {
  if (!(error instanceof Error)) return undefined;
  if (LOCATED.test(error.message)) return error.message.split("\n")[0];
  const code = (error as NodeJS.ErrnoException).code;
  if (code === "ERR_MODULE_NOT_FOUND" || code === "ERR_UNSUPPORTED_DIR_IMPORT") return describeMissingImport(error.message);
  if (error.name === "SyntaxError") return describeSyntaxError(file, error.message);
  return describeThrow(error);
}

/** Node's "Cannot find module '<path>' imported from <file>" (and the `.ts` loader's own form), with the line of the import. */
async function describeMissingImport(message: string): Promise<string | undefined> {
  const [first = "", ...rest] = message.split("\n");
  // Node 20 adds `Did you mean to import "./x.js"?` when a file with an extension is there.
  const suggested = /Did you mean to import "?([^"?]+)"?\?/.exec(rest.join("\n"))?.[1];
  let match: RegExpExecArray | null;
  if ((match = /^Cannot find module "(.+?)" imported from (.+?): no file /.exec(first))) {
    const [, specifier, importer] = match as unknown as [string, string, string];
    const at = await importSite(importer, (candidate) => candidate === specifier);
    return `${at}: cannot import "${specifier}": no such file (the .ts loader tried it with .ts, .mts, .js and .mjs, and as a folder with an index file)`;
  }
  if ((match = /^Directory import '(.+?)' is not supported resolving ES modules imported from (.+)$/.exec(first))) {
    const [, folder, importer] = match as unknown as [string, string, string];
    const { at, specifier } = await importOf(importer, folder);
    const fix = suggested ?? `${specifier}/index.js`;
    return `${at}: cannot import "${specifier}": it is a folder, and a .js or .mjs file imports as Node does, which looks for no index file: write "${fix}" (a .ts server file's imports may name a folder)`;
  }
  if ((match = /^Cannot find package '(.+?)' imported from (.+)$/.exec(first))) {
    const [, name, importer] = match as unknown as [string, string, string];
    const at = await importSite(importer, (candidate) => candidate === name || candidate.startsWith(`${name}/`));
    return `${at}: cannot import "${name}": the package is not installed in a node_modules folder at or above ${dirname(importer)}`;
  }
  if ((match = /^Cannot find module '(.+?)' imported from (.+)$/.exec(first))) {
    const [, missing, importer] = match as unknown as [string, string, string];
    const { at, specifier } = await importOf(importer, missing);
    return `${at}: cannot import "${specifier}": no such file${missingFileHint(missing, specifier, suggested)}`;
  }
  return undefined;
}

/** What to write instead of an import that names no file. */
function missingFileHint(missing: string, specifier: string, suggested: string | undefined): string {
  // A relative import without an extension: Node's ESM loader adds none.
  const found = suggested ?? withExtension(missing, specifier);
  if (found !== undefined) return `; a .js or .mjs file imports as Node does, which needs the extension: add it ("${found}")`;
  if (extname(missing) === "") {
    for (const extension of [".ts", ".mts"]) {
      if (isFile(missing + extension)) {
        return `; a .js or .mjs server file imports as Node does, which adds no extension and runs no TypeScript: write the server file as .ts, whose imports resolve "${specifier}" to ${missing + extension}`;
      }
    }
    return "; a .js or .mjs file imports as Node does, which needs the file's full name with its extension (.js, .mjs, .json)";
  }
  return "";
}

/** `specifier` as it would name an existing JavaScript or JSON file: with its extension, or its folder's index file. */
function withExtension(missing: string, specifier: string): string | undefined {
  for (const suffix of [".js", ".mjs", ".cjs", ".json", "/index.js", "/index.mjs", "/index.cjs"]) {
    if (isFile(missing + suffix)) return specifier.replace(/\/$/, "") + suffix;
  }
  return undefined;
}

/** Where `importer` imports the file `target` (an absolute path, as Node names it), and how the import is written. */
async function importOf(importer: string, target: string): Promise<{ at: string; specifier: string }> {
  let specifier: string | undefined;
  const at = await importSite(importer, (candidate) => {
    const path = candidate.startsWith("file:") ? safePath(candidate) : isAbsolute(candidate) ? candidate : candidate.startsWith(".") ? resolve(dirname(importer), candidate) : undefined;
    if (path === undefined || path.replace(/[\\/]+$/, "") !== target.replace(/[\\/]+$/, "")) return false;
    specifier = candidate;
    return true;
  });
  return { at, specifier: specifier ?? target };
}

/** `importer:line:column` of the first import whose specifier `matches`, else `importer` alone. */
async function importSite(importer: string, matches: (specifier: string) => boolean): Promise<string> {
  const source = await readFile(importer, "utf8").catch(() => "");
  // `from "x"`, `import "x"`, `import("x")`, `require("x")`, `export … from "x"`.
  const pattern = /(?:\bfrom\s*|\bimport\s*\(?\s*|\brequire\s*\(\s*)(["'])([^"'\n]+)\1/g;
  for (const found of source.matchAll(pattern)) {
    if (!matches(found[2]!)) continue;
    const offset = found.index! + found[0].length - found[2]!.length - 2;
    const before = source.slice(0, offset);
    const line = before.split("\n").length;
    return `${importer}:${line}:${offset - before.lastIndexOf("\n")}`;
  }
  return importer;
}

/**
 * V8's message, placed by esbuild: the first file of the graph it cannot parse. V8 and
 * esbuild agree on nearly every syntax error; when esbuild finds none, the message says so
 * rather than guess.
 */
async function describeSyntaxError(file: string, message: string): Promise<string> {
  const { location } = await importGraph(file);
  if (location !== undefined) return `${location.file}:${location.line}:${location.column}: SyntaxError: ${message} ${quoteLine(location.lineText)}`;
  // A JSON module's own message starts with its file.
  if (isAbsolute(message.split(": ")[0]!)) return `${message.split(": ")[0]}: SyntaxError: ${message.split(": ").slice(1).join(": ")}`;
  return `SyntaxError: ${message} (in ${file} or a file it imports)`;
}

/** An error thrown while the file ran: the place is the first frame of the app's own code. */
function describeThrow(error: Error): string | undefined {
  for (const line of (error.stack ?? "").split("\n").slice(1)) {
    const frame = /\(?((?:file:\/\/)?\/[^():]+?)(?:\?[^:)]*)?:(\d+):(\d+)\)?\s*$/.exec(line.trim());
    if (!frame) continue;
    const path = frame[1]!.startsWith("file:") ? safePath(frame[1]!) : frame[1]!;
    if (path === undefined || path.startsWith(PACKAGE_DIR) || path.split(sep).includes("node_modules")) continue;
    return `${path}:${frame[2]}:${frame[3]}: threw while loading: ${error.name}: ${error.message.split("\n")[0]}`;
  }
  return undefined;
}

function safePath(url: string): string | undefined {
  try {
    return fileURLToPath(url);
  } catch {
    return undefined;
  }
}
