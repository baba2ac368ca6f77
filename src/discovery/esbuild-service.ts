/**
 * The esbuild of this thread: the import graphs of server files (server-imports.ts) and the
 * `.ts` transforms that the module hooks ask for (import-server-file.ts). esbuild's API works
 * through a child process, its service (about 11–14 MB resident), which otherwise stays up
 * for the life of the process. Server files are loaded at start and, in dev mode, when one is
 * edited, so the service is stopped once no call has come for IDLE_MS, and the next call
 * starts a new one (a few milliseconds). The API module itself is loaded on first use, with
 * require(): an import() would go through the module hooks, and a thread whose loader
 * thread is waiting for a `.ts` transform (ts-hooks.ts) would then wait on itself.
 */
import { createRequire } from "node:module";
import type * as Esbuild from "esbuild";

type EsbuildApi = typeof Esbuild;

/** Long enough that the files of one start-up share one service, short enough that it is gone before the server serves. */
const IDLE_MS = 250;

let api: EsbuildApi | undefined;
let active = 0;
let idleTimer: NodeJS.Timeout | undefined;

/** Runs `call` with the esbuild API; the service stops IDLE_MS after the last call ends. */
export async function useEsbuild<T>(call: (esbuild: EsbuildApi) => Promise<T>): Promise<T> {
  active += 1;
  clearTimeout(idleTimer);
  try {
    api ??= createRequire(import.meta.url)("esbuild") as EsbuildApi;
    return await call(api);
  } finally {
    active -= 1;
    if (active === 0) {
      idleTimer = setTimeout(stopWhenIdle, IDLE_MS);
      idleTimer.unref();
    }
  }
}

function stopWhenIdle(): void {
  // stop() ends calls in flight, so only once none is left.
  if (active === 0) void api?.stop();
}

/**
 * A `.ts` server file's source as ESM JavaScript: types stripped, an inline source map. A
 * file esbuild cannot parse fails with one line naming `file:line:column`, the error and
 * the line itself, which is what the log and getStatus then show.
 */
export function transformTypeScript(file: string, source: string): Promise<string> {
  return useEsbuild(async (esbuild) => {
    try {
      const { code } = await esbuild.transform(source, {
        loader: "ts",
        format: "esm",
        target: "node20",
        sourcefile: file,
        sourcemap: "inline",
      });
      return code;
    } catch (error) {
      const first = (error as { errors?: Array<{ text: string; location: { line: number; column: number; lineText: string } | null }> }).errors?.[0];
      if (!first?.location) throw error;
      const { line, column, lineText } = first.location;
      throw new SyntaxError(`${file}:${line}:${column + 1}: ${first.text} ${quoteLine(lineText)}`, { cause: error });
    }
  });
}

/** The offending line of source, trimmed and cut short, for a one-line message. */
export function quoteLine(lineText: string): string {
  const text = lineText.trim();
  return `in \`${text.length > 120 ? `${text.slice(0, 117)}...` : text}\``;
}
