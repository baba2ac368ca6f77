/**
 * `counterpart check` (README "The author's toolkit"): type-checks an app's server files,
 * the same files the server loads (`scanRoot`), with the app's own `tsconfig.json` when it
 * has one. It never runs them. `.js` server files are checked only when that tsconfig
 * turns `checkJs` on, as `tsc` itself would.
 */
import { existsSync } from "node:fs";
import { join, relative } from "node:path";
import type { CompilerOptions, Diagnostic, FormatDiagnosticsHost } from "typescript";
import { scanRoot } from "../discovery/scan.js";
import { loadTypeScript, type TypeScript } from "./load-typescript.js";

export interface CheckReport {
  /** The tsconfig.json used, or undefined for the defaults. */
  tsconfig: string | undefined;
  /** Server files checked, relative to the root. */
  checked: string[];
  /** `.js`/`.mjs` server files left out because `checkJs` is off. */
  skippedJs: string[];
  errorCount: number;
  /** Formatted as tsc prints them. */
  output: string;
}

/**
 * Without a tsconfig: strict, and resolving imports the way the server's `.ts` loader
 * does (extensionless `./x`, `./x.js` for `./x.ts`: README "Server methods"), which is
 * TypeScript's bundler resolution.
 */
function defaultOptions(ts: TypeScript): CompilerOptions {
  return {
    target: ts.ScriptTarget.ES2022,
    module: ts.ModuleKind.Preserve,
    moduleResolution: ts.ModuleResolutionKind.Bundler,
    strict: true,
    noEmit: true,
    isolatedModules: true,
    skipLibCheck: true,
    allowImportingTsExtensions: true,
    resolveJsonModule: true,
  };
}

export async function checkServerFiles(root: string, options: { pretty: boolean }): Promise<CheckReport> {
  const ts = await loadTypeScript(root);
  const items = await scanRoot(root);
  const serverFiles = items.flatMap((item) => (item.bootHook ? [item.bootHook, ...item.serverFiles] : item.serverFiles));
  const tsconfig = join(root, "tsconfig.json");
  const configDiagnostics: Diagnostic[] = [];
  let compilerOptions = defaultOptions(ts);
  let used: string | undefined;
  if (existsSync(tsconfig)) {
    used = tsconfig;
    const parsed = ts.getParsedCommandLineOfConfigFile(tsconfig, { noEmit: true }, {
      ...ts.sys,
      onUnRecoverableConfigFileDiagnostic: (diagnostic) => configDiagnostics.push(diagnostic),
    });
    if (parsed) {
      compilerOptions = parsed.options;
      // An include that matches no file is not the author's problem here: the server files are the roots.
      configDiagnostics.push(...parsed.errors.filter((diagnostic) => diagnostic.code !== 18003));
    }
  }
  compilerOptions = { ...compilerOptions, noEmit: true };
  const checkJs = compilerOptions.checkJs === true;
  if (checkJs) compilerOptions.allowJs = true;
  const isJs = (file: string) => !file.endsWith(".ts");
  const roots = serverFiles.filter((file) => checkJs || !isJs(file));
  const program = ts.createProgram(roots, compilerOptions);
  const diagnostics = [...configDiagnostics, ...(roots.length > 0 ? ts.getPreEmitDiagnostics(program) : [])];
  const host: FormatDiagnosticsHost = {
    getCanonicalFileName: (file) => file,
    getCurrentDirectory: () => root,
    getNewLine: () => "\n",
  };
  return {
    tsconfig: used,
    checked: roots.map((file) => relative(root, file)),
    skippedJs: serverFiles.filter((file) => !roots.includes(file)).map((file) => relative(root, file)),
    errorCount: diagnostics.filter((diagnostic) => diagnostic.category === ts.DiagnosticCategory.Error).length,
    output: diagnostics.length === 0 ? "" : options.pretty ? ts.formatDiagnosticsWithColorAndContext(diagnostics, host) : ts.formatDiagnostics(diagnostics, host),
  };
}
