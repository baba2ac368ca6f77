/** Throw-away app roots and config files in fresh temporary folders. */
import { mkdirSync, mkdtempSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { dirname, join } from "node:path";

export interface TempAppOptions {
  /** Files below the root, path → content. */
  files?: Record<string, string>;
  /** Written as app.config.json: a string as it is (to test a broken file), anything else as JSON. */
  config?: unknown;
}

/** A fresh app root: `public/index.html` (unless `files` brings its own), `files` and `config`. */
export function tempApp(options: TempAppOptions = {}): string {
  const root = mkdtempSync(join(tmpdir(), "counterpart-root-"));
  const files = { "public/index.html": "<html><head></head><body>x</body></html>", ...options.files };
  for (const [path, content] of Object.entries(files)) {
    mkdirSync(dirname(join(root, path)), { recursive: true });
    writeFileSync(join(root, path), content);
  }
  const { config } = options;
  if (config !== undefined) writeFileSync(join(root, "app.config.json"), typeof config === "string" ? config : JSON.stringify(config));
  return root;
}

/** A config file alone in a fresh temporary folder. */
export function configFile(config: unknown): string {
  const file = join(mkdtempSync(join(tmpdir(), "counterpart-config-")), "app.config.json");
  writeFileSync(file, JSON.stringify(config));
  return file;
}
