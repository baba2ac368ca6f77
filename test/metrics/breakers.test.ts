// docs/reference/metrics.md, circuit breakers (docs/guides/server-methods.md "Runtime
// protections"): every move between closed, open and trial counted by breaker key, scraped
// over HTTP after real calls open a breaker and its short resetAfterMs lets a trial through;
// with server.redis, each process counts the moves of its own view of the shared breaker,
// those another process caused included.
import { join } from "node:path";
import { describe, expect, it } from "vitest";
import { openViewer, rpc, type Viewer } from "../helpers/http.js";
import { sample, scrape } from "../helpers/metrics.js";
import { describeWithRedis, useRedis } from "../helpers/redis.js";
import { startServer, useServer, type TestServer } from "../helpers/server.js";
import { waitFor } from "../helpers/wait.js";

const metricsOn = { server: { metrics: { enabled: true } } };
const moves = (text: string, key: string, from: string, to: string) => sample(text, "app_circuit_breaker_transitions_total", { key, from, to });

describe("breaker metrics, per process", () => {
  // rt/flaky: breaker "upstream-x", 2 failures open it, a trial after 400 ms.
  const app = useServer({ root: join(import.meta.dirname, "../fixtures/runtime-app"), config: { ...metricsOn, modules: { iso: { answer: 42 } } } });
  const flaky = (mode: string) => rpc(app.url, "plugin/rt/flaky", { viewer: app.viewer, body: { args: [mode] } });
  const KEY = "upstream-x";

  it("counts closed → open, open → trial and the trial's outcome, and no move for a refusal", async () => {
    for (let i = 0; i < 2; i++) expect((await flaky("fail")).status).toBe(500);
    expect((await flaky("ok")).body.code).toBe("RPC_CIRCUIT_OPEN");
    let text = await scrape(app.url);
    expect(moves(text, KEY, "closed", "open")).toBe(1);
    expect(moves(text, KEY, "open", "trial")).toBeUndefined();
    expect(sample(text, "app_circuit_breaker_state", { key: KEY, state: "open" })).toBe(1);

    // The first call admitted after resetAfterMs is the trial; its success closes the breaker.
    await waitFor(async () => (await flaky("ok")).status === 200, 3_000, "the trial call");
    text = await scrape(app.url);
    expect(moves(text, KEY, "open", "trial")).toBe(1);
    expect(moves(text, KEY, "trial", "closed")).toBe(1);
    expect(sample(text, "app_circuit_breaker_state", { key: KEY, state: "closed" })).toBe(1);

    // Open again, and a trial that fails opens it once more.
    for (let i = 0; i < 2; i++) expect((await flaky("fail")).status).toBe(500);
    await waitFor(async () => (await flaky("fail")).status === 500, 3_000, "the failing trial call");
    text = await scrape(app.url);
    expect(moves(text, KEY, "closed", "open")).toBe(2);
    expect(moves(text, KEY, "open", "trial")).toBe(2);
    expect(moves(text, KEY, "trial", "closed")).toBe(1);
    expect(moves(text, KEY, "trial", "open")).toBe(1);
    expect(sample(text, "app_circuit_breaker_state", { key: KEY, state: "open" })).toBe(1);
  });
});

describeWithRedis("breaker metrics, shared through Redis", () => {
  const redis = useRedis();
  const ROOT = join(import.meta.dirname, "../fixtures/shared-app");
  // gpu/flaky: breaker "model-server", 2 failures open it, a trial after 800 ms.
  const KEY = "model-server";

  it("counts each process's view: the one that failed and the one that only heard of it", async () => {
    const config = { server: { metrics: { enabled: true }, redis: { url: redis.url } } };
    const servers: TestServer[] = [];
    try {
      const [a, b] = await Promise.all([startServer({ root: ROOT, config }), startServer({ root: ROOT, config })]);
      servers.push(a!, b!);
      const viewer: Viewer = await openViewer(a!.url);
      const flaky = (on: TestServer, mode: string) => rpc(on.url, "plugin/gpu/flaky", { viewer, body: { args: [mode] } });
      // B's breaker exists from its first call on; from then on it follows the store.
      expect((await flaky(b!, "ok")).status).toBe(200);
      for (let i = 0; i < 2; i++) expect((await flaky(a!, "fail")).status).toBe(500);
      for (const on of [a!, b!]) {
        await waitFor(async () => moves(await scrape(on.url), KEY, "closed", "open") === 1, 3_000, "each view to open");
      }

      // B runs the deployment's one trial; A learns of the close from B's announcement.
      await waitFor(async () => (await flaky(b!, "ok")).status === 200, 5_000, "B's trial call");
      const onB = await scrape(b!.url);
      expect(moves(onB, KEY, "open", "trial")).toBe(1);
      expect(moves(onB, KEY, "trial", "closed")).toBe(1);
      await waitFor(async () => sample(await scrape(a!.url), "app_circuit_breaker_state", { key: KEY, state: "closed" }) === 1, 3_000, "A's view to close");
      const onA = await scrape(a!.url);
      expect(moves(onA, KEY, "open", "trial")).toBeUndefined();
      expect(moves(onA, KEY, "closed", "open")).toBe(1);
    } finally {
      await Promise.all(servers.map((server) => server.close()));
    }
  });
});
