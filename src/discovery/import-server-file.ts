import { register } from "node:module";
import { pathToFileURL } from "node:url";

let tsHooksRegistered = false;

/** Registers the `.ts` loader once per thread (the main thread and each isolation worker). */
export function enableTypeScriptServerFiles(): void {
  if (tsHooksRegistered) return;
  register(new URL("./ts-hooks.js", import.meta.url));
  tsHooksRegistered = true;
}

/**
 * Imports a server file. `version` busts the ESM cache so that dev mode can load an
 * edited file again; only that file is reloaded, not the files it imports.
 */
export async function importServerFile(file: string, version?: number): Promise<Record<string, unknown>> {
  if (/\.ts$/.test(file)) enableTypeScriptServerFiles();
  const url = pathToFileURL(file).href + (version === undefined ? "" : `?v=${version}`);
  return (await import(url)) as Record<string, unknown>;
}
