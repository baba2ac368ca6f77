/**
 * `output` by mode and bad policies (docs/guides/server-methods.md "Server methods"), with
 * zod (plugin zodp) and valibot (plugin valip): the result is checked in dev mode and with
 * `server.rpc.validateOutput`, and its schema's output is answered; a policy whose
 * `input`, `output` or `errors` is malformed fails its item, naming file and method.
 */
import { describe, expect, it } from "vitest";
import { join } from "node:path";
import { readFileSync } from "node:fs";
import { startServer, useServer, type ServerFixture } from "../helpers/server.js";
import { rpc } from "../helpers/http.js";
import { tempApp } from "../helpers/app-root.js";

const ROOT = join(import.meta.dirname, "../fixtures/validate-app");
const CONFIG = JSON.parse(readFileSync(join(ROOT, "app.config.json"), "utf8"));

const production = useServer({ root: ROOT });
const checked = useServer({ root: ROOT, config: { server: { rpc: { ...CONFIG.server.rpc, validateOutput: true } } } });
const dev = useServer({ root: ROOT, dev: true });

function call(server: ServerFixture, path: string, args: unknown[]) {
  return rpc(server.url, path, { viewer: server.viewer, body: { args } });
}

describe.each(["zodp", "valip"])("output with %s", (plugin) => {
  for (const method of ["shaped", "isoShaped"]) {
    it(`${method}: not checked in production by default`, async () => {
      const answer = await call(production, `plugin/${plugin}/${method}`, [{ good: false }]);
      expect(answer.body).toEqual({ result: { id: "hunter2-result", name: 5 } });
    });

    it(`${method}: with server.rpc.validateOutput, a bad result is 500 RPC_BAD_RESULT without its issues`, async () => {
      const answer = await call(checked, `plugin/${plugin}/${method}`, [{ good: false }]);
      expect(answer.status).toBe(500);
      expect(answer.body.code).toBe("RPC_BAD_RESULT");
      expect(answer.body.details.issues).toBeUndefined();
      expect(answer.body.details.requestId).toBe(answer.headers.get("x-request-id"));
      const events = checked.logs.forRequest(answer.headers.get("x-request-id")!);
      expect(events).toHaveLength(1);
      expect(events[0]).toMatchObject({ event: "rpc.error", status: 500, code: "RPC_BAD_RESULT" });
      expect(checked.logs.text()).not.toContain("hunter2-result");
    });

    it(`${method}: the schema's output is what is answered (unknown keys stripped)`, async () => {
      const answer = await call(checked, `plugin/${plugin}/${method}`, [{ good: true }]);
      expect(answer.body).toEqual({ result: { id: 1, name: "ok" } });
    });

    it(`${method}: in dev mode, the answer lists the issues, values masked`, async () => {
      const answer = await call(dev, `plugin/${plugin}/${method}`, [{ good: false }]);
      expect(answer.status).toBe(500);
      expect(answer.body.code).toBe("RPC_BAD_RESULT");
      const paths = answer.body.details.issues.map((issue: { path: unknown }) => issue.path);
      expect(paths).toEqual(expect.arrayContaining([["id"], ["name"]]));
      expect(JSON.stringify(answer.body)).not.toContain("hunter2-result");
    });
  }
});

describe("a bad policy fails its item", () => {
  const files = {
    "plugins/notschema/a.server.mjs": "export const policy = { m: { input: { parse() {} } } }; export function m() {}",
    "plugins/badoutput/a.server.mjs": "export const policy = { m: { output: 'string' } }; export function m() {}",
    "plugins/badstatus/a.server.mjs": "export const policy = { m: { errors: { GONE: { status: 200 } } } }; export function m() {}",
    "plugins/clash/a.server.mjs": "export const policy = { m: { errors: { RPC_TIMEOUT: { status: 504 } } } }; export function m() {}",
    "plugins/badcode/a.server.mjs": "export const policy = { m: { errors: { 'not a code': { status: 400 } } } }; export function m() {}",
    "plugins/extra/a.server.mjs": "export const policy = { m: { errors: { GONE: { status: 410, retry: true } } } }; export function m() {}",
    "plugins/fine/a.server.mjs":
      "export const policy = { ok: { auth: { public: true }, input: { '~standard': { version: 1, vendor: 'hand', validate: (value) => ({ value }) } }, errors: { GONE: { status: 410 } } } }; export function ok(_ctx, x) { return x; }",
  };

  it("answers 503 and logs file, method and reason; the rest serve", async () => {
    const root = tempApp({ files });
    const app = await startServer({ root });
    try {
      expect((await rpc(app.url, "plugin/fine/ok", { body: { args: [7] } })).body).toEqual({ result: 7 });
      const reasons: Record<string, RegExp> = {
        notschema: /policy\.m\.input: must be a Standard Schema/,
        badoutput: /policy\.m\.output: must be a Standard Schema/,
        badstatus: /policy\.m\.errors\.GONE\.status: must be an HTTP error status/,
        clash: /policy\.m\.errors\.RPC_TIMEOUT.*is one of the gateway's own codes/,
        badcode: /policy\.m\.errors.*must be upper-case letters/,
        extra: /policy\.m\.errors\.GONE\.retry: unknown key/,
      };
      const errors = app.logs.lines.filter((line) => line.level === 50 && /failed to load/.test(String(line.msg)));
      for (const [id, reason] of Object.entries(reasons)) {
        expect((await rpc(app.url, `plugin/${id}/m`)).body.code).toBe("RPC_TARGET_UNAVAILABLE");
        const line = errors.find((entry) => entry.id === id);
        expect(String(line?.msg)).toContain(join(root, `plugins/${id}/a.server.mjs`));
        expect([id, String(line?.msg)]).toEqual([id, expect.stringMatching(reason)]);
      }
    } finally {
      await app.close();
    }
  });

  it("with --strict, refuses to start", async () => {
    const root = tempApp({ files: { "plugins/clash/a.server.mjs": files["plugins/clash/a.server.mjs"] } });
    await expect(startServer({ root, strict: true })).rejects.toThrow(/a\.server\.mjs: policy\.m\.errors\.RPC_TIMEOUT/);
  });
});

describe("dev mode's getStatus", () => {
  it("describes a method's validators by vendor and its declared errors, not the schema objects", async () => {
    const status = await rpc(dev.url, "server/core/getStatus", { viewer: dev.viewer, body: { args: [] } });
    expect(status.status).toBe(200);
    const methods = status.body.result.registry.find((target: { id: string }) => target.id === "zodp").methods;
    const policyOf = (name: string) => methods.find((method: { name: string }) => method.name === name).policy;
    expect(policyOf("shaped")).toMatchObject({ input: "zod", output: "zod", errors: null });
    expect(policyOf("lookup")).toMatchObject({ input: "zod", output: null, errors: { ITEM_MISSING: { status: 404, message: "No such item" }, UPSTREAM_DOWN: { status: 503, message: "UPSTREAM_DOWN" } } });
    expect(policyOf("plain")).toMatchObject({ input: null, output: null, errors: null });
    const valibot = status.body.result.registry.find((target: { id: string }) => target.id === "valip").methods;
    expect(valibot.find((method: { name: string }) => method.name === "greet").policy.input).toBe("valibot");
  });
});
