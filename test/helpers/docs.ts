/**
 * The docs as the tests read them: the README (the front door) and every page below docs/
 * (guides and reference), by their path from the repository's root.
 */
import { readFileSync, readdirSync } from "node:fs";
import { join, relative } from "node:path";
import { REPO } from "./process.js";

/** README.md and every .md file below docs/, as paths from the repository root. */
export function docPages(): string[] {
  const below = (dir: string): string[] =>
    readdirSync(dir, { withFileTypes: true }).flatMap((entry) => {
      const path = join(dir, entry.name);
      if (entry.isDirectory()) return below(path);
      return entry.name.endsWith(".md") ? [relative(REPO, path)] : [];
    });
  return ["README.md", ...below(join(REPO, "docs")).sort()];
}

export function readDoc(page: string): string {
  return readFileSync(join(REPO, page), "utf8");
}

/**
 * The text of one section of a page: from its heading (given with its #s) to the next
 * heading of the same level or above outside a code block, or the end of the page.
 */
export function docSection(page: string, heading: string): string {
  const lines = readDoc(page).split("\n");
  const start = lines.indexOf(heading);
  if (start < 0) throw new Error(`${page} has no section ${heading}`);
  const level = /^#+/.exec(heading)![0].length;
  let fenced = false;
  let end = start + 1;
  for (; end < lines.length; end++) {
    const line = lines[end]!;
    if (line.startsWith("```")) fenced = !fenced;
    const hashes = /^(#+) /.exec(line)?.[1];
    if (!fenced && hashes && hashes.length <= level) break;
  }
  return lines.slice(start, end).join("\n") + "\n";
}
