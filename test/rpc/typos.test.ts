// A misspelt method name, at the call and in a policy (docs/guides/server-methods.md "Dev mode", "Server methods"
// and "counterpart check"): dev mode names the nearest method; outside it the answer names
// none, so that an item's methods cannot be listed by guessing. A policy entry that names
// no function says which one was likely meant, and `counterpart check` fails on it.
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { tempApp } from "../helpers/app-root.js";
import { rpc } from "../helpers/http.js";
import { runToExit } from "../helpers/process.js";
import { startServer, type TestServer } from "../helpers/server.js";

const TYPO_POLICY = `export const policy = { greeet: { auth: { public: true } } };
export function greet(_ctx: unknown, name: string): string {
  return "Hello, " + name;
}
export function farewell(): string {
  return "Bye";
}
`;

const files = { "plugins/hello/hello.server.ts": TYPO_POLICY };

describe("an unknown method", () => {
  let dev: TestServer;
  let prod: TestServer;
  beforeAll(async () => {
    const root = tempApp({ files });
    dev = await startServer({ root, dev: true });
    prod = await startServer({ root });
  });
  afterAll(async () => {
    await dev?.close();
    await prod?.close();
  });

  it("in dev mode, is named with the nearest method", async () => {
    const answer = await rpc(dev.url, "plugin/hello/greett");
    expect(answer.status).toBe(404);
    expect(answer.body).toEqual({
      error: 'Unknown method "greett" of plugin "hello": did you mean "greet"?',
      code: "RPC_UNKNOWN_METHOD",
      details: { method: "greett", didYouMean: "greet" },
    });
  });

  it("in dev mode, suggests nothing far off, and never an inherited name", async () => {
    expect((await rpc(dev.url, "plugin/hello/zzzzzz")).body.details).toEqual({ method: "zzzzzz" });
    expect((await rpc(dev.url, "plugin/hello/toStrin")).body.details).toEqual({ method: "toStrin" });
  });

  it("outside dev mode, answers empty details", async () => {
    const answer = await rpc(prod.url, "plugin/hello/greett");
    expect(answer.body).toEqual({ error: "Unknown method", code: "RPC_UNKNOWN_METHOD", details: {} });
  });

  it("a policy entry naming no function warns with the function likely meant", () => {
    const warning = prod.logs.lines.find((line) => typeof line.msg === "string" && line.msg.includes('policy entry "greeet"'));
    expect(warning?.msg).toMatch(/hello\.server\.ts: policy entry "greeet" names no exported function: did you mean "greet"\? \("greet" keeps the default policy meanwhile\)$/);
  });
});

describe("counterpart check on a policy entry that names no function", () => {
  it("reports it as an error with the function likely meant, and exits 1", async () => {
    const root = tempApp({ files });
    const result = await runToExit(["check", "--root", root]);
    expect(result.stdout).toMatch(/plugins\/hello\/hello\.server\.ts: error: policy entry "greeet" names no exported function: did you mean "greet"\?/);
    expect(result.stdout).toContain("1 error");
    expect(result.code).toBe(1);
  });

  it("reads .js server files' policies too, and passes a correct policy", async () => {
    const js = tempApp({ files: { "plugins/hello/hello.server.mjs": 'export const policy = { greet: {}, farewel: {} };\nexport function greet() {}\nexport const farewell = () => "bye";\n' } });
    const failed = await runToExit(["check", "--root", js]);
    expect(failed.stdout).toMatch(/hello\.server\.mjs: error: policy entry "farewel" names no exported function: did you mean "farewell"\?/);
    expect(failed.code).toBe(1);
    const fine = tempApp({ files: { "plugins/hello/hello.server.ts": TYPO_POLICY.replace("greeet", "greet") } });
    const passed = await runToExit(["check", "--root", fine]);
    expect(passed.stdout).toContain("no errors");
    expect(passed.code).toBe(0);
  });
});
