import { statSync } from "node:fs";

/** True when `path` is a file (a link to one included); false for a folder, nothing, or a path through a file. */
export function isFile(path: string): boolean {
  try {
    return statSync(path, { throwIfNoEntry: false })?.isFile() ?? false;
  } catch {
    return false;
  }
}
