/**
 * `counterpart check [--root DIR]`: type-checks the app's server files and their policies;
 * exit 1 when TypeScript reports an error or a policy entry names no exported function, so
 * that it can gate a commit or a CI job.
 */
import { relative, resolve } from "node:path";
import { parseArgs } from "node:util";
import { requireAppRoot } from "../authoring/app-root.js";
import { checkServerFiles } from "../authoring/check.js";
import { ToolkitError } from "../authoring/toolkit-error.js";
import type { Command } from "./commands.js";

const USAGE = "usage: counterpart check [--root DIR]   (DIR defaults to APP_ROOT, else the current folder)";

export const checkCommand: Command = async (argv, env) => {
  let parsed;
  try {
    parsed = parseArgs({ args: argv, options: { root: { type: "string" }, help: { type: "boolean", short: "h" } }, strict: true });
  } catch (error) {
    throw new ToolkitError(`${(error as Error).message}\n${USAGE}`);
  }
  if (parsed.values.help) {
    process.stdout.write(USAGE + "\n");
    return 0;
  }
  const root = resolve(parsed.values.root ?? (env.APP_ROOT || "."));
  if (!(await requireAppRoot(root)).hasItemFolders) process.stderr.write(`counterpart check: ${root} has no plugins/ or modules/ folder: is it the app root?\n`);
  const report = await checkServerFiles(root, { pretty: process.stdout.isTTY === true });
  if (report.output !== "") process.stdout.write(report.output + "\n");
  for (const line of report.policyErrors) process.stdout.write(line + "\n");
  const config = report.tsconfig ? relative(process.cwd(), report.tsconfig) || report.tsconfig : "no tsconfig.json: strict defaults";
  const skipped = report.skippedJs.length > 0 ? `; ${report.skippedJs.length} .js server files not checked (checkJs is off)` : "";
  const errors = report.errorCount === 0 ? "no errors" : `${report.errorCount} error${report.errorCount === 1 ? "" : "s"}`;
  process.stdout.write(`checked ${report.checked.length} server file${report.checked.length === 1 ? "" : "s"} (${config})${skipped}: ${errors}\n`);
  return report.errorCount === 0 ? 0 : 1;
};
