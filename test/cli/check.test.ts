// docs/guides/toolkit.md "Type-checking server files: counterpart check": a gate that cannot pass by
// mistake (a wrong root, a tsconfig that would drop strict), and that sees what the app's
// tsconfig sees (its declaration files).
import { join, relative } from "node:path";
import { describe, expect, it } from "vitest";
import { tempApp } from "../helpers/app-root.js";
import { REPO, runToExit } from "../helpers/process.js";
import { typesAppRoot, writeFiles } from "../helpers/viewer-types.js";

const strictConfig = (extra: object = {}) => JSON.stringify({ compilerOptions: { strict: true, noEmit: true, module: "preserve", moduleResolution: "bundler", types: [] }, ...extra });

// Each check runs the TypeScript compiler in a child process: seconds of CPU, more on a busy machine.
describe("counterpart check", { timeout: 90_000 }, () => {
  it("refuses a root that is not a folder instead of checking nothing", async () => {
    const result = await runToExit(["check", "--root", "/nonexistent-app-root"]);
    expect(result.code).toBe(1);
    expect(result.stderr).toMatch(/^counterpart: \/nonexistent-app-root is not a folder/);
  });

  it("warns when the root has no plugins/ or modules/", async () => {
    const result = await runToExit(["check", "--root", tempApp()]);
    expect(result.code).toBe(0);
    expect(result.stderr).toMatch(/has no plugins\/ or modules\/ folder: is it the app root\?/);
  });

  it("reads globals from the tsconfig's declaration files", async () => {
    const root = tempApp({
      files: {
        "tsconfig.json": strictConfig({ include: ["plugins", "types"] }),
        "types/globals.d.ts": "declare const BUILD_ID: string;\n",
        "plugins/p/p.server.ts": "export function build(): string {\n  return BUILD_ID;\n}\n",
      },
    });
    const result = await runToExit(["check", "--root", root], {}, 60_000);
    expect(result.stdout).toContain("no errors");
    expect(result.code).toBe(0);
  });

  it("names errors relative to where it runs, as tsc does, and exits 1", async () => {
    const app = tempApp({ files: { "plugins/p/p.server.ts": "export function n(): number {\n  return 'x';\n}\n" } });
    const result = await runToExit(["check", "--root", app], {}, 60_000);
    expect(result.code).toBe(1);
    // runToExit runs in the repository: the file is named from there.
    expect(result.stdout).toContain(`${relative(REPO, join(app, "plugins/p/p.server.ts"))}(2,3): error TS2322`);
  });

  it("refuses a tsconfig that only references other projects (it would check without strict)", async () => {
    const root = tempApp({
      files: {
        "tsconfig.json": JSON.stringify({ files: [], references: [{ path: "./tsconfig.server.json" }] }),
        "tsconfig.server.json": strictConfig({ compilerOptions: { composite: true, strict: true }, include: ["plugins"] }),
        "plugins/p/p.server.ts": "export function f(x) {\n  return x;\n}\n",
      },
    });
    const result = await runToExit(["check", "--root", root], {}, 60_000);
    expect(result.code).toBe(1);
    expect(result.stderr).toMatch(/only references other projects/);
  });
});

describe("counterpart check on validated methods", () => {
  // Inside the repository, so that zod, valibot and the server resolve by name as in an app.
  const root = typesAppRoot({
    "plugins/p/p.server.ts": `
import { z } from "zod";
import * as v from "valibot";
import type { MethodPolicy, RpcContext } from "@counterpart-viewer/server";

const Find = z.object({ q: z.string().trim(), limit: z.number().default(10) });
const Rename = v.object({ id: v.string() });

export const policy: Record<string, MethodPolicy> = {
  find: { input: Find, output: z.array(z.string()), errors: { TOO_BROAD: { status: 422, message: "Narrow it down" } } },
};
export const more = {
  rename: { input: Rename, errors: { GONE: { status: 410 } } },
} satisfies Record<string, MethodPolicy>;

export function find(ctx: RpcContext, input: z.output<typeof Find>): string[] {
  if (input.q === "") throw ctx.fail("TOO_BROAD", { limit: input.limit });
  return [input.q];
}
export function rename(ctx: RpcContext, input: v.InferOutput<typeof Rename>): string {
  return input.id;
}
`,
  });

  it("accepts input, output, errors and ctx.fail", { timeout: 70_000 }, async () => {
    const result = await runToExit(["check", "--root", root], {}, 60_000);
    expect(result.stdout).toContain("no errors");
    expect(result.code).toBe(0);
  });

  it("refuses a policy whose input is no validator or whose error status is not a number", { timeout: 70_000 }, async () => {
    writeFiles(root, {
      "plugins/q/q.server.ts": `
import type { MethodPolicy } from "@counterpart-viewer/server";
export const policy: Record<string, MethodPolicy> = {
  m: { input: { parse: (x: unknown) => x } },
  n: { errors: { GONE: { status: "410" } } },
};
export function m(): void {}
export function n(): void {}
`,
    });
    const result = await runToExit(["check", "--root", root], {}, 60_000);
    expect(result.code).toBe(1);
    expect(result.stdout).toMatch(/q\.server\.ts\(4,\d+\): error TS2353/);
    expect(result.stdout).toMatch(/q\.server\.ts\(5,\d+\): error TS2322/);
  });
});
