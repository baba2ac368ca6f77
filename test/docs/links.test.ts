/**
 * Links between the README and the pages of docs/ lead somewhere: a relative link names a
 * file that exists, and its #anchor a heading of that page (GitHub's slugs), so that a
 * page moved or a heading renamed fails here rather than in a reader's browser. Every page
 * of docs/ links back to the map, README "The docs".
 */
import { existsSync } from "node:fs";
import { dirname, join, normalize } from "node:path";
import { describe, expect, it } from "vitest";
import { docPages, readDoc } from "../helpers/docs.js";
import { REPO } from "../helpers/process.js";

/** The text outside fenced code blocks and inline code, where links are links. */
function prose(markdown: string): string {
  return markdown.replace(/^```[\s\S]*?^```/gm, "").replace(/`[^`\n]*`/g, "");
}

/** GitHub's anchor for a heading: lower case, punctuation dropped, spaces to hyphens, repeats numbered. */
function anchors(markdown: string): Set<string> {
  const found = new Set<string>();
  const seen = new Map<string, number>();
  for (const match of markdown.replace(/^```[\s\S]*?^```/gm, "").matchAll(/^#{1,6} (.+)$/gm)) {
    const base = match[1]!
      .trim()
      .toLowerCase()
      .replace(/[^\p{L}\p{N}\s_-]/gu, "")
      .replace(/\s/g, "-");
    const count = seen.get(base) ?? 0;
    seen.set(base, count + 1);
    found.add(count === 0 ? base : `${base}-${count}`);
  }
  for (const match of markdown.matchAll(/<a (?:name|id)="([^"]+)"/g)) found.add(match[1]!);
  return found;
}

const pages = docPages();

describe("links between the docs", () => {
  it("reads the README and both parts of docs/", () => {
    expect(pages).toEqual(expect.arrayContaining(["README.md", "docs/guides/server-methods.md", "docs/reference/error-codes.md"]));
  });

  it("lead to a file that exists and a heading it has", () => {
    const broken: string[] = [];
    for (const page of pages) {
      for (const [, target] of prose(readDoc(page)).matchAll(/\]\(([^)\s]+)\)/g)) {
        if (/^[a-z][a-z+.-]*:/i.test(target!)) continue; // http:, https:, mailto:
        const [path, anchor] = target!.split("#") as [string, string | undefined];
        const file = path === "" ? page : normalize(join(dirname(page), path));
        if (!existsSync(join(REPO, file))) {
          broken.push(`${page}: ${target} (no file ${file})`);
          continue;
        }
        if (anchor !== undefined && file.endsWith(".md") && !anchors(readDoc(file)).has(anchor)) broken.push(`${page}: ${target} (no heading #${anchor} in ${file})`);
      }
    }
    expect(broken).toEqual([]);
  });

  it("every page of docs/ links back to the map", () => {
    const map = anchors(readDoc("README.md"));
    expect(map).toContain("the-docs");
    const without = pages.filter((page) => page !== "README.md" && !readDoc(page).includes("](../../README.md#the-docs)"));
    expect(without).toEqual([]);
  });

  it("the README stays a front door: short, the first plugin and where it stands before the map, the reference kept apart", () => {
    const readme = readDoc("README.md");
    expect(readme.split("\n").length).toBeLessThan(350);
    const headings = [...readme.matchAll(/^## (.+)$/gm)].map((match) => match[1]);
    expect(headings).toEqual(["Set-up", "Your first plugin in five minutes", "How fast", "The docs"]);
  });

  it("the map links every page of docs/", () => {
    const map = prose(readDoc("README.md"));
    expect(pages.filter((page) => page !== "README.md" && !map.includes(`](${page})`))).toEqual([]);
  });
});
