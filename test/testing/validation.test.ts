// docs/guides/server-methods.md "Validating input and output": the testing kit checks `input`, `output` and
// declared errors exactly as the server does, with zod (zodp) and valibot (valip).
import { describe, expect, it } from "vitest";
import { join } from "node:path";
import { callMethod, loadServerFile, makeContext, startTestApp } from "../../dist/testing/index.js";

const ROOT = join(import.meta.dirname, "../fixtures/validate-app");
type Methods = Record<string, (ctx: unknown, input?: unknown) => unknown>;

describe.each(["zodp", "valip"])("callMethod with %s", (plugin) => {
  const load = () => loadServerFile<Methods>(join(ROOT, `plugins/${plugin}/${plugin}.server.mjs`));

  it("hands the method the schema's output and refuses a bad input with the server's 400", async () => {
    const { greet, paint } = await load();
    expect((await callMethod(greet!, { name: "ada" })).result).toEqual({ got: { name: "ADA", times: 1 }, args: 1 });
    const refused = await callMethod(greet!, { name: "" }).catch((error: unknown) => error);
    expect(refused).toMatchObject({ status: 400, code: "RPC_BAD_INPUT", details: { issues: [{ path: ["name"] }] } });
    const secret = await callMethod(paint!, { color: "hunter2-secret" }).catch((error: unknown) => error);
    expect(secret).toMatchObject({ code: "RPC_BAD_INPUT" });
    expect(JSON.stringify((secret as { details: unknown }).details)).not.toContain("hunter2-secret");
  });

  it("always checks output, issues included", async () => {
    const { shaped } = await load();
    expect((await callMethod(shaped!, { good: true })).result).toEqual({ id: 1, name: "ok" });
    const bad = await callMethod(shaped!, { good: false }).catch((error: unknown) => error);
    expect(bad).toMatchObject({ status: 500, code: "RPC_BAD_RESULT", details: { issues: expect.arrayContaining([expect.objectContaining({ path: ["id"] })]) } });
  });

  it("gives ctx.fail the policy's declared errors", async () => {
    const { lookup } = await load();
    await expect(callMethod(lookup!, { code: "ITEM_MISSING" })).rejects.toMatchObject({ status: 404, code: "ITEM_MISSING", message: "No such item", details: { asked: "ITEM_MISSING" } });
    await expect(callMethod(lookup!, { code: "NOPE" })).rejects.toThrow(/ctx\.fail\("NOPE"\): not declared/);
  });
});

describe("makeContext", () => {
  it("fails with the errors it is given, and any other code as a plain Error", () => {
    const { ctx } = makeContext({ errors: { GONE: { status: 410 } } });
    expect(ctx.fail("GONE", { id: 1 })).toMatchObject({ status: 410, code: "GONE", message: "GONE", details: { id: 1 } });
    expect(ctx.fail("OTHER")).not.toHaveProperty("status");
  });
});

describe("startTestApp", () => {
  it("checks input as the server does, and output whatever the mode", async () => {
    const app = await startTestApp({ root: ROOT });
    try {
      const viewer = (await app.viewer()).plugin("valip");
      await expect(viewer.greet({ name: 1 })).rejects.toMatchObject({ status: 400, code: "RPC_BAD_INPUT" });
      await expect(viewer.shaped({ good: false })).rejects.toMatchObject({ status: 500, code: "RPC_BAD_RESULT" });
      await expect(viewer.lookup({ code: "ITEM_MISSING" })).rejects.toMatchObject({ status: 404, code: "ITEM_MISSING" });
    } finally {
      await app.close();
    }
  });
});
