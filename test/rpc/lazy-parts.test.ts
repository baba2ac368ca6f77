// docs/reference/benchmarks.md "Memory": parts a server may never use are not loaded at
// start. @opentelemetry/api loads once an SDK registers a tracer provider (every copy of
// the API announces that under one global symbol); @fastify/busboy with the first
// multipart call. Its own file: vitest gives each file a fresh process, so nothing else
// loaded them.
import { createRequire } from "node:module";
import { expect, it } from "vitest";
import { tempApp } from "../helpers/app-root.js";
import { rpc } from "../helpers/http.js";
import { startServer } from "../helpers/server.js";

const require = createRequire(import.meta.url);
const loaded = (name: string) => Object.keys(require.cache).some((path) => path.includes(`/node_modules/${name}/`));

const METHODS = `
export const policy = { echo: { auth: { public: true } }, size: { auth: { public: true }, runtime: { files: { maxFiles: 1, maxFileBytes: 1000 } } } };
export function echo(_ctx, value) { return value; }
export async function size(_ctx, file) { return (await file.text()).length; }
`;

it("loads neither the OpenTelemetry API nor the multipart parser until a call needs one", async () => {
  const root = tempApp({ files: { "plugins/parts/parts.server.mjs": METHODS } });
  const server = await startServer({ root, config: {} });
  try {
    expect((await rpc(server.url, "plugin/parts/echo", { body: { args: ["x"] } })).body).toEqual({ result: "x" });
    expect([loaded("@opentelemetry/api"), loaded("@fastify/busboy")]).toEqual([false, false]);

    const form = new FormData();
    form.append("args", JSON.stringify({ args: [{ $file: 0 }] }));
    form.append("file:0", new Blob(["four"]), "four.txt");
    const answer = await fetch(`${server.url}/__rpc/plugin/parts/size`, { method: "POST", body: form });
    expect([answer.status, await answer.json()]).toEqual([200, { result: 4 }]);
    expect(loaded("@fastify/busboy")).toBe(true);

    // An operator's SDK registering through its own import of the API: the next call's trace
    // loads ours and sees the provider.
    const { trace, ProxyTracerProvider } = require("@opentelemetry/api") as typeof import("@opentelemetry/api");
    expect(loaded("@opentelemetry/api")).toBe(true);
    const seen: string[] = [];
    const noop = new ProxyTracerProvider().getTracer("x");
    trace.setGlobalTracerProvider({
      getTracer: () => ({ ...noop, startSpan: (name: string, ...rest: unknown[]) => (seen.push(name), (noop.startSpan as (...a: unknown[]) => ReturnType<typeof noop.startSpan>)(name, ...rest)) }) as typeof noop,
    });
    try {
      expect((await rpc(server.url, "plugin/parts/echo", { body: { args: ["y"] } })).status).toBe(200);
      expect(seen).toEqual(["rpc"]);
    } finally {
      trace.disable();
    }
  } finally {
    await server.close();
  }
});
