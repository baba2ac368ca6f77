/**
 * `counterpart types [--root DIR] [--out FILE] [--config FILE]` (docs/guides/toolkit.md "Typed calls:
 * counterpart types"): writes the viewer's typed-calls file and says what it wrote.
 */
import { mkdir, readFile, writeFile } from "node:fs/promises";
import { dirname, join, relative, resolve } from "node:path";
import { parseArgs } from "node:util";
import { requireAppRoot } from "../authoring/app-root.js";
import { ToolkitError } from "../authoring/toolkit-error.js";
import { readExpose } from "../authoring/types-expose.js";
import { generateTypes } from "../authoring/types-generate.js";
import type { Command } from "./commands.js";

export const TYPES_FILE = "counterpart-env.d.ts";

const USAGE = `usage: counterpart types [--root DIR] [--out FILE] [--config FILE]

  --root DIR     the app root with plugins/ and modules/ (APP_ROOT, else the current folder)
  --out FILE     the file to write (default: <root>/${TYPES_FILE})
  --config FILE  the config file whose server.rpc.expose applies (APP_CONFIG, else <root>/app.config.json when it exists)`;

export const typesCommand: Command = async (argv, env) => {
  let values;
  try {
    ({ values } = parseArgs({
      args: argv,
      options: { root: { type: "string" }, out: { type: "string" }, config: { type: "string" }, help: { type: "boolean", short: "h" } },
      strict: true,
      allowPositionals: false,
    }));
  } catch (error) {
    throw new ToolkitError(`${(error as Error).message}\n${USAGE}`);
  }
  if (values.help) {
    process.stdout.write(USAGE + "\n");
    return 0;
  }
  // The server's own defaults: a deployment's APP_CONFIG may set `expose: "policy"`, and
  // the types must list the methods that server serves.
  const root = resolve(values.root ?? (env.APP_ROOT || "."));
  if (!(await requireAppRoot(root)).hasItemFolders) process.stderr.write(`counterpart types: ${root} has no plugins/ or modules/ folder: is it the app root?\n`);
  const out = values.out === undefined ? join(root, TYPES_FILE) : resolve(values.out);
  const config = values.config ?? (env.APP_CONFIG || undefined);
  const expose = await readExpose(root, config === undefined ? undefined : resolve(config), env);
  const generated = await generateTypes(root, expose, "counterpart types");
  for (const warning of generated.warnings) process.stderr.write(`counterpart types: ${warning}\n`);
  const before = await readFile(out, "utf8").catch(() => undefined);
  // Unchanged bytes are not written again: a watcher on the file sees only real changes.
  if (before !== generated.text) {
    await mkdir(dirname(out), { recursive: true });
    await writeFile(out, generated.text);
  }
  const methods = generated.items.flatMap((item) => item.methods);
  const count = (n: number, word: string): string => `${n} ${word}${n === 1 ? "" : "s"}`;
  const plugins = generated.items.filter((item) => item.kind === "plugin").length;
  const untyped = methods.filter((method) => method.untyped !== undefined).length;
  process.stdout.write(
    `counterpart types: ${before === generated.text ? "unchanged" : "wrote"} ${relative(process.cwd(), out) || out}: ` +
      `${count(plugins, "plugin")}, ${count(generated.items.length - plugins, "module")}, ${count(methods.length, "method")}` +
      ` (${methods.filter((method) => method.streaming !== false).length} streaming, ${untyped} untyped)\n`,
  );
  return 0;
};
