/**
 * The author tier of an item's secure config: `<item>/server.json`, JSON with comments and
 * trailing commas, read once at start. It is never served (src/static/static-path.ts).
 * Its `requiredConfig` list is about the viewer's plugin selection, not the server: it is
 * dropped here.
 */
import { readFile } from "node:fs/promises";
import { join } from "node:path";
import { parseJsonWithComments } from "./jsonc.js";

export const AUTHOR_CONFIG_FILE = "server.json";

export async function readAuthorConfig(itemDir: string): Promise<Record<string, unknown> | undefined> {
  const file = join(itemDir, AUTHOR_CONFIG_FILE);
  let text: string;
  try {
    text = await readFile(file, "utf8");
  } catch (error) {
    if ((error as NodeJS.ErrnoException).code === "ENOENT") return undefined;
    throw error;
  }
  const value = parseJsonWithComments(text, file);
  if (value === null || typeof value !== "object" || Array.isArray(value)) throw new Error(`${file} must hold a JSON object`);
  const { requiredConfig: _viewerOnly, ...rest } = value as Record<string, unknown>;
  return rest;
}
