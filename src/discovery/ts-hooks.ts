/**
 * Node module hooks (run in the loader thread) that let plugin authors ship `.ts` server
 * files with no build step: esbuild strips the types on load. `.ts` files are always ESM,
 * whatever the nearest package.json says, and a `./x.js` import resolves to `./x.ts` when
 * only the TypeScript file exists (the convention of TypeScript's NodeNext resolution).
 * Hand-written rather than tsx: tsx hooks the CommonJS loader too and follows the nearest
 * package.json "type", which a plugin folder often lacks.
 */
import { readFile } from "node:fs/promises";
import { existsSync } from "node:fs";
import { fileURLToPath } from "node:url";
import { transform } from "esbuild";

type ResolveContext = { parentURL?: string; conditions?: string[] };
type ResolveResult = { url: string; format?: string | null; shortCircuit?: boolean };
type NextResolve = (specifier: string, context: ResolveContext) => Promise<ResolveResult>;
type LoadContext = { format?: string | null; conditions?: string[] };
type LoadResult = { format: string; source?: string | Buffer | null; shortCircuit?: boolean };
type NextLoad = (url: string, context: LoadContext) => Promise<LoadResult>;

const TS_FILE = /\.(?:ts|mts)(?:\?.*)?$/;

export async function resolve(specifier: string, context: ResolveContext, next: NextResolve): Promise<ResolveResult> {
  const parent = context.parentURL;
  if (parent && TS_FILE.test(parent) && (specifier.startsWith("./") || specifier.startsWith("../")) && /\.m?js$/.test(specifier)) {
    const tsUrl = new URL(specifier.replace(/\.js$/, ".ts").replace(/\.mjs$/, ".mts"), parent);
    const jsUrl = new URL(specifier, parent);
    if (!existsSync(fileURLToPath(jsUrl)) && existsSync(fileURLToPath(tsUrl))) {
      return { url: tsUrl.href, format: "module", shortCircuit: true };
    }
  }
  return next(specifier, context);
}

export async function load(url: string, context: LoadContext, next: NextLoad): Promise<LoadResult> {
  if (!url.startsWith("file:") || !TS_FILE.test(url)) return next(url, context);
  const file = fileURLToPath(url.split("?")[0]!);
  const source = await readFile(file, "utf8");
  const { code } = await transform(source, {
    loader: "ts",
    format: "esm",
    target: "node20",
    sourcefile: file,
    sourcemap: "inline",
  });
  return { format: "module", source: code, shortCircuit: true };
}
