/**
 * The app root an author's command works on: it must be a folder, and one without
 * `plugins/` or `modules/` is almost always a wrong `--root` (a CI gate that checks
 * nothing would pass), so the commands say so.
 */
import { stat } from "node:fs/promises";
import { join } from "node:path";
import { ITEM_FOLDERS } from "../discovery/scan.js";
import { ToolkitError } from "./toolkit-error.js";

export interface AppRootState {
  /** Whether `plugins/` or `modules/` exists. */
  hasItemFolders: boolean;
}

export async function requireAppRoot(root: string): Promise<AppRootState> {
  const info = await stat(root).catch(() => undefined);
  if (!info?.isDirectory()) throw new ToolkitError(`${root} is not a folder: pass the app root with --root`);
  const folders = await Promise.all(Object.values(ITEM_FOLDERS).map((name) => stat(join(root, name)).then((found) => found.isDirectory(), () => false)));
  return { hasItemFolders: folders.includes(true) };
}
