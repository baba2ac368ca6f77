// The error table of docs/reference/error-codes.md is the client-facing contract: it must
// list exactly the codes the server can answer, with their statuses.
import { describe, expect, it } from "vitest";
import { readFileSync, readdirSync } from "node:fs";
import { join, relative } from "node:path";
import { ERROR_CODES, STARTUP_ERROR_CODES } from "../dist/index.js";

const errorPage = readFileSync(join(import.meta.dirname, "../docs/reference/error-codes.md"), "utf8");
const table = errorPage.slice(0, errorPage.indexOf("## Start-up errors"));
const rows = new Map(
  [...table.matchAll(/^\| `([A-Z_]+)` \| (\d{3}) \|/gm)].map((match) => [match[1]!, Number(match[2])]),
);

describe("docs/reference/error-codes.md error codes", () => {
  it("lists every declared code with its status", () => {
    for (const [code, { status }] of Object.entries(ERROR_CODES)) {
      expect([code, rows.get(code)]).toEqual([code, status]);
    }
  });

  it("lists no code that is not declared", () => {
    for (const code of rows.keys()) expect(Object.keys(ERROR_CODES)).toContain(code);
  });
});

describe("docs/reference/error-codes.md start-up error codes", () => {
  const section = errorPage.slice(errorPage.indexOf("## Start-up errors"));
  const listed = [...section.matchAll(/^\| `([A-Z_]+)` \|/gm)].map((match) => match[1]);

  it("lists exactly the declared codes", () => {
    expect(listed.sort()).toEqual(Object.keys(STARTUP_ERROR_CODES).sort());
  });
});

const REPO = join(import.meta.dirname, "..");

/** Every file below `dir`, skipping installed packages. */
function filesBelow(dir: string): string[] {
  return readdirSync(dir, { withFileTypes: true }).flatMap((entry) => {
    const path = join(dir, entry.name);
    if (entry.isDirectory()) return entry.name === "node_modules" ? [] : filesBelow(path);
    return entry.isFile() ? [path] : [];
  });
}

describe("citations a reader can follow", () => {
  // Design notes and issue trackers outside the repository are not something a reader of
  // the project has: comments and docs point to README sections and docs/ files, or state
  // the rule themselves. (The last letter sits in a character class so that these
  // patterns do not match this file.)
  const CITATIONS = [/\bCONTRAC[T]\b/, /\bSPE[C](?:\.md\b|\s+")/, /\b[Ii]ssu[e]\s+#?\d+/];
  const SCANNED = ["src", "test", "bench", "docs", "scripts", "assets", "demo", ".ci", "deploy"];
  const files = [
    ...SCANNED.flatMap((dir) => filesBelow(join(REPO, dir))),
    ...["README.md", "index.js", "cluster-index.js", "Dockerfile", ".dockerignore"].map((name) => join(REPO, name)),
  ];

  it("scans the source, tests, docs, scripts and deployment files", () => {
    expect(files.map((file) => relative(REPO, file))).toEqual(
      expect.arrayContaining(["src/index.ts", "docs/guides/proxy.md", "README.md", ".ci/run", "Dockerfile", "deploy/kubernetes/deployment.yaml"]),
    );
  });

  it("finds no citation of the design notes or of issue numbers", () => {
    const found: string[] = [];
    for (const file of files) {
      const text = readFileSync(file);
      if (text.includes(0)) continue; // binary
      text
        .toString("utf8")
        .split("\n")
        .forEach((line, index) => {
          if (CITATIONS.some((pattern) => pattern.test(line))) found.push(`${relative(REPO, file)}:${index + 1}: ${line.trim()}`);
        });
    }
    expect(found).toEqual([]);
  });

  it("holds no leftover merge-conflict markers", () => {
    // Built from parts so that this file does not match itself.
    const marker = new RegExp(`^(?:${"<".repeat(7)} |${">".repeat(7)} )`);
    const found: string[] = [];
    for (const file of files) {
      const text = readFileSync(file);
      if (text.includes(0)) continue;
      text
        .toString("utf8")
        .split("\n")
        .forEach((line, index) => {
          if (marker.test(line)) found.push(`${relative(REPO, file)}:${index + 1}`);
        });
    }
    expect(found).toEqual([]);
  });
});

describe("LICENSE", () => {
  it("is the license package.json names, for the project's contributors", () => {
    const pkg = JSON.parse(readFileSync(join(REPO, "package.json"), "utf8")) as { license: string };
    const license = readFileSync(join(REPO, "LICENSE"), "utf8");
    expect(pkg.license).toBe("MIT");
    expect(license.split("\n")[0]).toBe("MIT License");
    expect(license).toMatch(/^Copyright \(c\) 2026 Counterpart contributors$/m);
  });
});
