/**
 * Imports server files, `.ts` ones through the module hooks: in-thread hooks where Node has
 * `module.registerHooks` (22.15+, 24; in-thread-hooks.ts), else hooks in Node's loader
 * thread (Node 20; loader-thread.ts). Both resolve and version imports by the same rules
 * (ts-hook-rules.ts).
 */
import { createRequire } from "node:module";
import { pathToFileURL } from "node:url";
import { inThreadHooksAvailable, installInThreadHooks, setInThreadVersions } from "./in-thread-hooks.js";
import { registerLoaderThreadHooks, setLoaderThreadVersions } from "./loader-thread.js";
import { pretransformTypeScript } from "./pretransform.js";

/**
 * Registers the `.ts` loader once per thread (the main thread and each isolation worker).
 * The transformed code carries an inline source map, and Node reads it only with source
 * maps on: then a stack trace names the line the author wrote, not the transformed one. It
 * costs only when a stack is formatted (an error logged), never on a call that succeeds.
 */
export function enableTypeScriptServerFiles(): void {
  process.setSourceMapsEnabled(true);
  if (inThreadHooksAvailable) installInThreadHooks();
  else registerLoaderThreadHooks();
}

/**
 * Imports a server file. `version` busts the ESM cache so that dev mode can load an
 * edited file again; the files it imports follow the versions `setModuleVersions` set.
 */
export async function importServerFile(file: string, version?: number): Promise<Record<string, unknown>> {
  if (/\.m?ts$/.test(file)) {
    enableTypeScriptServerFiles();
    if (inThreadHooksAvailable) await pretransformTypeScript(file);
  }
  const url = pathToFileURL(file).href + (version === undefined ? "" : `?v=${version}`);
  return (await import(url)) as Record<string, unknown>;
}

/**
 * Dev reloads: from now on, an import of each of these files (real paths) in this thread
 * resolves to that version's instance (null: the first one). Resolves once the hooks have
 * them, so that the import that follows sees them. The module hooks are registered here if
 * no `.ts` file did it yet: a `.js` server file's helpers need them too.
 *
 * A CommonJS file is cached by its path, not its URL, whatever version its URL carries:
 * its entry in the require cache is dropped so that the new version runs it again.
 */
export async function setModuleVersions(versions: ReadonlyArray<readonly [string, number | null]>): Promise<void> {
  if (versions.length === 0) return;
  const cache = createRequire(import.meta.url).cache;
  for (const [file] of versions) delete cache[file];
  if (inThreadHooksAvailable) {
    installInThreadHooks();
    setInThreadVersions(versions);
  } else {
    await setLoaderThreadVersions(versions);
  }
}
