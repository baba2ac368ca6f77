/**
 * A config section for a plugin or module that does not exist (`plugins.notse` for the
 * plugin `notes`) is almost always a typo or a leftover, and its settings silently reach
 * nobody: a warning at start names it, and the id it was probably meant for. Only a
 * warning: a deployment may configure an item it installs later.
 */
import { closest } from "../config/did-you-mean.js";
import type { ResolvedConfig } from "../config/resolve.js";
import type { Logger } from "../log/logger.js";
import { ITEM_FOLDERS } from "./scan.js";

export function warnConfigWithoutItem(
  configured: ResolvedConfig["configuredItems"],
  items: ReadonlyArray<{ kind: "plugin" | "module"; id: string }>,
  log: Logger,
): void {
  const ids = { plugin: new Set<string>(), module: new Set<string>() };
  for (const item of items) ids[item.kind].add(item.id);
  for (const { key, kind, id } of configured) {
    if (ids[kind].has(id)) continue;
    const other = kind === "plugin" ? "module" : "plugin";
    const near = closest(id, ids[kind]);
    const hint =
      near !== undefined
        ? `; did you mean "${key.slice(0, -id.length)}${near}"?`
        : ids[other].has(id)
          ? `; ${id} is a ${other}: did you mean "${key.slice(0, -(ITEM_FOLDERS[kind].length + id.length + 1))}${ITEM_FOLDERS[other]}.${id}"?`
          : "";
    log.warn({ key, kind, id }, `${key}: there is no ${kind} "${id}" (no folder ${ITEM_FOLDERS[kind]}/${id}), so nothing reads this section${hint}`);
  }
}
