/**
 * `server.rpc.expose` for `counterpart types`, read from the app's config file alone. The
 * rest of the config is not validated here: a build that writes the types should not need
 * the deployment's secrets that `<% NAME %>` references elsewhere in the file name.
 */
import { readFile } from "node:fs/promises";
import { join } from "node:path";
import { substituteEnv } from "../config/substitute-env.js";
import { ToolkitError } from "./toolkit-error.js";
import type { Expose } from "./types-generate.js";

export async function readExpose(root: string, configFile: string | undefined, env: NodeJS.ProcessEnv): Promise<Expose> {
  const file = configFile ?? join(root, "app.config.json");
  let text: string;
  try {
    text = await readFile(file, "utf8");
  } catch (error) {
    // As the server: the default file is optional, a named one is not.
    if ((error as NodeJS.ErrnoException).code === "ENOENT" && configFile === undefined) return "exports";
    throw new ToolkitError(`cannot read config file ${file}: ${(error as NodeJS.ErrnoException).code ?? error}`);
  }
  let raw: unknown;
  try {
    raw = JSON.parse(text);
  } catch (error) {
    throw new ToolkitError(`config file ${file} is not valid JSON: ${(error as Error).message}`);
  }
  const expose = ownPath(raw, ["server", "rpc", "expose"]);
  if (expose === undefined) return "exports";
  let value: unknown;
  try {
    value = substituteEnv(expose, env, new Set(), ["server", "rpc", "expose"]);
  } catch (error) {
    throw new ToolkitError(`${file}: ${(error as Error).message}`);
  }
  if (value !== "exports" && value !== "policy") throw new ToolkitError(`${file}: server.rpc.expose must be "exports" or "policy", not ${JSON.stringify(value)}`);
  return value;
}

function ownPath(value: unknown, path: readonly string[]): unknown {
  let current = value;
  for (const key of path) {
    if (current === null || typeof current !== "object" || !Object.hasOwn(current, key)) return undefined;
    current = (current as Record<string, unknown>)[key];
  }
  return current;
}
