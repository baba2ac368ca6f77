/**
 * `counterpart check` (docs/guides/toolkit.md): type-checks an app's server files,
 * the same files the server loads (`scanRoot`), with the app's own `tsconfig.json` when it
 * has one. It never runs them. `.js` server files are checked only when that tsconfig
 * turns `checkJs` on, as `tsc` itself would.
 */
import { existsSync } from "node:fs";
import { join, relative } from "node:path";
import type { FormatDiagnosticsHost } from "typescript";
import { scanRoot } from "../discovery/scan.js";
import { readAppCompilerSettings } from "./app-tsconfig.js";
import { formatPolicyProblem, policyProblems } from "./check-policy.js";
import { loadTypeScript } from "./load-typescript.js";

export interface CheckReport {
  /** The tsconfig.json used, or undefined for the defaults. */
  tsconfig: string | undefined;
  /** Server files checked, relative to the root. */
  checked: string[];
  /** `.js`/`.mjs` server files left out because `checkJs` is off. */
  skippedJs: string[];
  /** TypeScript's errors and the policy entries that name no function. */
  errorCount: number;
  /** Formatted as tsc prints them. */
  output: string;
  /** One line per policy entry that names no exported function. */
  policyErrors: string[];
}

export async function checkServerFiles(root: string, options: { pretty: boolean }): Promise<CheckReport> {
  const ts = await loadTypeScript(root);
  const items = await scanRoot(root);
  const serverFiles = items.flatMap((item) => (item.bootHook ? [item.bootHook, ...item.serverFiles] : item.serverFiles));
  const tsconfig = join(root, "tsconfig.json");
  const used = existsSync(tsconfig) ? tsconfig : undefined;
  const settings = readAppCompilerSettings(ts, used);
  const compilerOptions = { ...settings.options };
  const checkJs = compilerOptions.checkJs === true;
  if (checkJs) compilerOptions.allowJs = true;
  const isJs = (file: string) => !file.endsWith(".ts");
  const roots = serverFiles.filter((file) => checkJs || !isJs(file));
  // The tsconfig's own declaration files (globals an app declares) are part of its world.
  const ambient = settings.fileNames.filter((file) => file.endsWith(".d.ts"));
  const program = ts.createProgram([...roots, ...ambient], compilerOptions);
  const diagnostics = [...settings.diagnostics, ...(roots.length > 0 ? ts.getPreEmitDiagnostics(program) : [])];
  // Policies are read in every server file, .js ones too: those outside the type-checked
  // program get a program of their own, which only reads them (its diagnostics are not ours).
  const unchecked = serverFiles.filter((file) => !roots.includes(file));
  const problems = [
    ...policyProblems(ts, program, roots),
    ...(unchecked.length > 0 ? policyProblems(ts, ts.createProgram(unchecked, { ...compilerOptions, allowJs: true, checkJs: false, noEmit: true }), unchecked) : []),
  ];
  const policyErrors = problems.map((problem) => formatPolicyProblem(problem, process.cwd()));
  const host: FormatDiagnosticsHost = {
    getCanonicalFileName: (file) => file,
    // File names relative to where the command runs, as tsc prints them (and editors link them).
    getCurrentDirectory: () => process.cwd(),
    getNewLine: () => "\n",
  };
  return {
    tsconfig: used,
    checked: roots.map((file) => relative(root, file)),
    skippedJs: serverFiles.filter((file) => !roots.includes(file)).map((file) => relative(root, file)),
    errorCount: diagnostics.filter((diagnostic) => diagnostic.category === ts.DiagnosticCategory.Error).length + policyErrors.length,
    policyErrors,
    output: diagnostics.length === 0 ? "" : options.pretty ? ts.formatDiagnosticsWithColorAndContext(diagnostics, host) : ts.formatDiagnostics(diagnostics, host),
  };
}
