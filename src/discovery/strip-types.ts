/**
 * The synchronous transform the in-thread hooks fall back to for a `.ts` file nobody
 * transformed ahead (in-thread-hooks.ts): Node's own `module.stripTypeScriptTypes`. "strip"
 * mode first, which blanks the types out and so keeps every line and column where the
 * author wrote it; "transform" mode, with an inline source map, only for what stripping
 * cannot do (enums, namespaces, parameter properties).
 *
 * Node marks the function experimental and prints a warning on its first call; the same
 * compiler strips `.ts` files by default on these lines, so a server that never asked for
 * anything experimental should not print it: the warning is left out for this one call.
 */
import * as nodeModule from "node:module";

type StripOptions = { mode: "strip" | "transform"; sourceMap?: boolean; sourceUrl?: string };
type StripTypeScriptTypes = (source: string, options: StripOptions) => string;

const strip = (nodeModule as { stripTypeScriptTypes?: StripTypeScriptTypes }).stripTypeScriptTypes;

export function stripTypesSync(file: string, source: string): string {
  if (strip === undefined) throw new Error(`${file}: this Node has no module.stripTypeScriptTypes to load it with; use Node 20.18+, 22.15+ or 24`);
  return withoutExperimentalWarning(() => {
    try {
      return strip(source, { mode: "strip" });
    } catch (error) {
      if ((error as { code?: string }).code !== "ERR_UNSUPPORTED_TYPESCRIPT_SYNTAX") throw asLoadError(file, error);
      try {
        return strip(source, { mode: "transform", sourceMap: true, sourceUrl: file });
      } catch (inner) {
        throw asLoadError(file, inner);
      }
    }
  });
}

function withoutExperimentalWarning<T>(run: () => T): T {
  const emitWarning = process.emitWarning;
  process.emitWarning = ((warning: string | Error, ...rest: unknown[]) => {
    const type = typeof rest[0] === "string" ? rest[0] : (rest[0] as { type?: string } | undefined)?.type;
    if (type === "ExperimentalWarning" && String(warning).includes("stripTypeScriptTypes")) return;
    (emitWarning as (...args: unknown[]) => void).call(process, warning, ...rest);
  }) as typeof process.emitWarning;
  try {
    return run();
  } finally {
    process.emitWarning = emitWarning;
  }
}

/** A compiler error named by the file, as esbuild's are (esbuild-service.ts). */
function asLoadError(file: string, error: unknown): Error {
  const message = (error as Error)?.message ?? String(error);
  return new SyntaxError(`${file}: ${message.split("\n")[0]}`, { cause: error });
}
