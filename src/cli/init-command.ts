/**
 * `counterpart init [dir] [--name NAME]`: a new app root with a TypeScript plugin, a page
 * that calls it and a test of its methods (docs/guides/toolkit.md).
 */
import { relative, resolve } from "node:path";
import { parseArgs } from "node:util";
import { dependencySpec, installSource } from "../authoring/install-source.js";
import { scaffoldApp } from "../authoring/scaffold.js";
import { ToolkitError } from "../authoring/toolkit-error.js";
import type { Command } from "./commands.js";
import { packageVersion } from "./version.js";

const USAGE = "usage: counterpart init [dir] [--name NAME]   (dir defaults to the current folder)";

export const initCommand: Command = async (argv) => {
  let parsed;
  try {
    parsed = parseArgs({ args: argv, options: { name: { type: "string" }, help: { type: "boolean", short: "h" } }, allowPositionals: true, strict: true });
  } catch (error) {
    throw new ToolkitError(`${(error as Error).message}\n${USAGE}`);
  }
  if (parsed.values.help) {
    process.stdout.write(USAGE + "\n");
    return 0;
  }
  if (parsed.positionals.length > 1) throw new ToolkitError(`init takes one folder, got ${parsed.positionals.length}\n${USAGE}`);
  const target = parsed.positionals[0] ?? ".";
  const source = installSource();
  const serverSpec = dependencySpec(source, packageVersion(), resolve(target));
  const app = await scaffoldApp(target, { name: parsed.values.name, serverSpec });
  const near = relative(process.cwd(), app.dir);
  const cd = near.startsWith("..") ? app.dir : near;
  process.stdout.write(
    [
      `Created ${app.name} in ${app.dir}:`,
      ...app.files.map((file) => `  ${file}`),
      "",
      // Not from the registry (the package is not published there yet): say where the app's
      // npm install will take the server from, since moving or deleting it breaks that install.
      ...(source.kind === "file"
        ? [`package.json depends on "@counterpart-viewer/server": "${serverSpec}" (${source.path}), the copy init ran from:`, "keep it there, or change that line once the package is on the registry.", ""]
        : []),
      "Next:",
      ...(cd === "" ? [] : [`  cd ${shellWord(cd)}`]),
      "  npm install",
      "  npm start        # serves it on http://127.0.0.1:8080",
      "  npm test         # runs test/, the plugin's own tests",
      "",
    ].join("\n"),
  );
  return 0;
};

/** A path as one POSIX shell word: single quotes keep `$`, backquotes and spaces literal. */
function shellWord(path: string): string {
  return /^[\w./-]+$/.test(path) ? path : `'${path.replaceAll("'", `'\\''`)}'`;
}
