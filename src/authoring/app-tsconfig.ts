/**
 * How the author's commands read an app's TypeScript settings, one rule for `check` and
 * `types`: the tsconfig.json the app has, else defaults that resolve imports the way the
 * server's `.ts` loader does (extensionless `./x`, `./x.js` for `./x.ts`: docs/guides/server-methods.md "Server
 * methods"), which is TypeScript's bundler resolution.
 */
import type { CompilerOptions, Diagnostic } from "typescript";
import type { TypeScript } from "./load-typescript.js";
import { ToolkitError } from "./toolkit-error.js";

export interface AppCompilerSettings {
  options: CompilerOptions;
  /** What the tsconfig itself names (its `include`/`files`): its ambient `.d.ts` files count too. */
  fileNames: string[];
  /** Problems with the tsconfig, reported with the type errors. */
  diagnostics: Diagnostic[];
}

export function loaderDefaults(ts: TypeScript): CompilerOptions {
  return {
    target: ts.ScriptTarget.ES2022,
    module: ts.ModuleKind.Preserve,
    moduleResolution: ts.ModuleResolutionKind.Bundler,
    strict: true,
    isolatedModules: true,
    skipLibCheck: true,
    allowImportingTsExtensions: true,
    resolveJsonModule: true,
  };
}

/** `tsconfig` undefined: the defaults. Always `noEmit`: the server runs the sources. */
export function readAppCompilerSettings(ts: TypeScript, tsconfig: string | undefined): AppCompilerSettings {
  if (tsconfig === undefined) return { options: { ...loaderDefaults(ts), noEmit: true }, fileNames: [], diagnostics: [] };
  const diagnostics: Diagnostic[] = [];
  const parsed = ts.getParsedCommandLineOfConfigFile(tsconfig, { noEmit: true }, {
    ...ts.sys,
    onUnRecoverableConfigFileDiagnostic: (diagnostic) => diagnostics.push(diagnostic),
  });
  if (!parsed) return { options: { ...loaderDefaults(ts), noEmit: true }, fileNames: [], diagnostics };
  if (parsed.fileNames.length === 0 && (parsed.projectReferences?.length ?? 0) > 0) {
    // A "solution" tsconfig (only `references`, as Vite's template writes) has no options
    // of its own: checking with it would silently drop `strict`.
    throw new ToolkitError(`${tsconfig} only references other projects; give the server files a tsconfig of their own (or run with --root on a folder that has one)`);
  }
  // An include that matches no file is not the author's problem here: the server files are the roots.
  diagnostics.push(...parsed.errors.filter((diagnostic) => diagnostic.code !== 18003));
  return { options: { ...parsed.options, noEmit: true }, fileNames: parsed.fileNames, diagnostics };
}
