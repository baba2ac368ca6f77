// docs/reference/metrics.md: GET /metrics in Prometheus text — off unless `server.metrics.enabled`,
// behind an optional bearer token (401 METRICS_UNAUTHORIZED), RPC calls and durations,
// queue and breaker gauges, one registry per server, and in a cluster the sum over workers.
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { TEST_SESSION_SECRET, startServer, type TestServer } from "../helpers/server.js";
import { openViewer, rpc, type Viewer } from "../helpers/http.js";
import type { RunningProcess } from "../helpers/process.js";
import { CLUSTER_APP, call, rpcCall, startCluster } from "../helpers/cluster.js";
import { configFile } from "../helpers/app-root.js";
import { TestUpstream } from "../helpers/upstream.js";
import { sample } from "../helpers/metrics.js";

const TOKEN = "metrics-token-for-the-tests";

describe("metrics in one process", () => {
  let plain: TestServer;
  let secured: TestServer;
  let off: TestServer;
  let viewer: Viewer;
  beforeAll(async () => {
    plain = await startServer({ root: CLUSTER_APP, config: { server: { metrics: { enabled: true } } } });
    secured = await startServer({ root: CLUSTER_APP, config: { server: { metrics: { enabled: true, token: TOKEN } } } });
    off = await startServer({ root: CLUSTER_APP });
    viewer = await openViewer(plain.url);
  });
  afterAll(async () => {
    await Promise.all([plain?.close(), secured?.close(), off?.close()]);
  });

  it("counts proxied requests by alias and status, with durations", async () => {
    const upstream = await new TestUpstream().start();
    upstream.routes.set("/up/missing", (_req, res) => res.writeHead(404).end("no"));
    const withProxy = await startServer({
      root: CLUSTER_APP,
      config: { server: { metrics: { enabled: true }, secure: { proxies: { up: { baseUrl: `${upstream.origin}/up` } } } } },
    });
    try {
      const proxyViewer = await openViewer(withProxy.url);
      const headers = { cookie: proxyViewer.cookie, "x-app-csrf": proxyViewer.csrf };
      for (const path of ["a", "b", "missing"]) await (await fetch(`${withProxy.url}/proxy/up/${path}`, { headers })).text();
      await (await fetch(`${withProxy.url}/proxy/nope/x`, { headers })).text();
      const text = await (await fetch(withProxy.url + "/metrics")).text();
      expect(sample(text, "app_proxy_requests_total", { alias: "up", status: "200" })).toBe(2);
      expect(sample(text, "app_proxy_requests_total", { alias: "up", status: "404" })).toBe(1);
      expect(sample(text, "app_proxy_requests_total", { alias: "_unknown", status: "404" })).toBe(1);
      expect(sample(text, "app_proxy_duration_seconds_count", { alias: "up" })).toBe(3);
    } finally {
      await withProxy.close();
      await upstream.close();
    }
  });

  it("is not routed unless server.metrics.enabled", async () => {
    const answer = await fetch(off.url + "/metrics");
    expect(answer.status).toBe(404);
    expect(((await answer.json()) as { code: string }).code).toBe("NOT_FOUND");
  });

  it("counts calls by kind, id, method and code, with a duration histogram", async () => {
    for (let i = 0; i < 3; i++) expect((await rpc(plain.url, "plugin/cl/pid", { viewer })).status).toBe(200);
    expect((await rpc(plain.url, "plugin/cl/pid")).status).toBe(401);
    expect((await rpc(plain.url, "plugin/cl/fail")).status).toBe(500);
    const answer = await fetch(plain.url + "/metrics");
    expect(answer.status).toBe(200);
    expect(answer.headers.get("content-type")).toMatch(/^text\/plain; version=0\.0\.4/);
    const text = await answer.text();
    const labels = { kind: "plugin", id: "cl", method: "pid" };
    expect(sample(text, "app_rpc_calls_total", { ...labels, code: "OK" })).toBe(3);
    expect(sample(text, "app_rpc_calls_total", { ...labels, code: "RPC_NO_SESSION" })).toBe(1);
    expect(sample(text, "app_rpc_calls_total", { kind: "plugin", id: "cl", method: "fail", code: "RPC_INTERNAL_ERROR" })).toBe(1);
    expect(sample(text, "app_rpc_duration_seconds_count", labels)).toBe(4);
    expect(sample(text, "app_rpc_duration_seconds_bucket", { ...labels, le: "+Inf" })).toBe(4);
    expect(text).toMatch(/^process_cpu_user_seconds_total \d/m);
  });

  it("labels calls to made-up names _unknown, so they cannot grow the series", async () => {
    await rpc(plain.url, "plugin/cl/no-such-method-1");
    await rpc(plain.url, "plugin/nobody/x");
    await rpc(plain.url, "weird/nobody/x");
    const text = await (await fetch(plain.url + "/metrics")).text();
    expect(sample(text, "app_rpc_calls_total", { kind: "plugin", id: "_unknown", method: "_unknown", code: "RPC_UNKNOWN_METHOD" })).toBe(1);
    expect(sample(text, "app_rpc_calls_total", { kind: "plugin", id: "_unknown", method: "_unknown", code: "RPC_UNKNOWN_TARGET" })).toBe(1);
    expect(sample(text, "app_rpc_calls_total", { kind: "_unknown", id: "_unknown", method: "_unknown", code: "RPC_UNKNOWN_TARGET" })).toBe(1);
    expect(text).not.toContain("no-such-method-1");
    expect(text).not.toContain("nobody");
  });

  it("reads queue lengths and breaker states from the runtime at scrape time", async () => {
    await rpc(plain.url, "plugin/cl/limited", { viewer, body: { args: [1] } });
    await rpc(plain.url, "plugin/cl/fail");
    const text = await (await fetch(plain.url + "/metrics")).text();
    expect(sample(text, "app_rpc_active_calls", { key: "plugin/cl/limited" })).toBe(0);
    expect(sample(text, "app_rpc_queued_calls", { key: "plugin/cl/limited" })).toBe(0);
    // Two failures reached the threshold of cl-failing: open.
    expect(sample(text, "app_circuit_breaker_state", { key: "cl-failing", state: "open" })).toBe(1);
    expect(sample(text, "app_circuit_breaker_state", { key: "cl-failing", state: "closed" })).toBe(0);
    expect(sample(text, "app_circuit_breaker_state", { key: "cl-upstream", state: "closed" })).toBe(1);
    expect(sample(text, "app_http_requests_in_flight")).toBe(1);
  });

  it("keeps one registry per server: the second server counts only its own calls", async () => {
    const own = await openViewer(secured.url);
    await rpc(secured.url, "plugin/cl/pid", { viewer: own });
    const text = await (await fetch(secured.url + "/metrics", { headers: { authorization: `Bearer ${TOKEN}` } })).text();
    expect(sample(text, "app_rpc_calls_total", { kind: "plugin", id: "cl", method: "pid", code: "OK" })).toBe(1);
  });

  it("with a token, answers 401 METRICS_UNAUTHORIZED without it or with a wrong one", async () => {
    for (const authorization of [undefined, "Bearer wrong", `Basic ${TOKEN}`, `Bearer ${TOKEN}x`, TOKEN]) {
      const answer = await fetch(secured.url + "/metrics", { headers: authorization ? { authorization } : {} });
      expect(answer.status).toBe(401);
      expect(answer.headers.get("www-authenticate")).toBe('Bearer realm="metrics"');
      expect(await answer.json()).toEqual({ error: "Unauthorized", code: "METRICS_UNAUTHORIZED", details: {} });
    }
    const good = await fetch(secured.url + "/metrics", { headers: { authorization: `Bearer ${TOKEN}` } });
    expect(good.status).toBe(200);
    expect(secured.logs.text()).not.toContain(TOKEN);
  });
});

describe("metrics in a cluster", () => {
  let cluster: RunningProcess;
  beforeAll(async () => {
    const config = configFile({ server: { metrics: { enabled: true, token: TOKEN } } });
    cluster = await startCluster(["--config", config], { APP_SESSION_SECRET: TEST_SESSION_SECRET });
  });
  afterAll(() => cluster?.stop("SIGKILL"));

  it("sums every worker's series, whichever worker answers the scrape", async () => {
    const viewer = await openViewer(cluster.url);
    const answers = await Promise.all(Array.from({ length: 12 }, () => rpcCall(cluster.url, "plugin/cl/pid", viewer)));
    expect(new Set(answers.map((answer) => answer.json.result)).size).toBe(2);
    await rpcCall(cluster.url, "plugin/cl/fail", null);
    await rpcCall(cluster.url, "plugin/cl/fail", null);

    const auth = { authorization: `Bearer ${TOKEN}` };
    expect((await call(cluster.url, "/metrics")).status).toBe(401);
    // Two scrapes on fresh connections: two different workers answer the same totals.
    const scrapes = await Promise.all([call(cluster.url, "/metrics", { headers: auth }), call(cluster.url, "/metrics", { headers: auth })]);
    for (const scrape of scrapes) {
      expect(scrape.status).toBe(200);
      expect(sample(scrape.body, "app_rpc_calls_total", { kind: "plugin", id: "cl", method: "pid", code: "OK" })).toBe(12);
      expect(sample(scrape.body, "app_rpc_calls_total", { kind: "plugin", id: "cl", method: "fail", code: "RPC_INTERNAL_ERROR" })).toBe(2);
      expect(sample(scrape.body, "app_cluster_workers", { state: "ready" })).toBe(2);
      // Breakers are per process; the failures gauge sums them over the workers.
      expect(sample(scrape.body, "app_circuit_breaker_failures", { key: "cl-failing" })).toBe(2);
    }
  });

  it("sums the workers' streams and session store series, whichever worker ran the calls", async () => {
    const auth = { authorization: `Bearer ${TOKEN}` };
    const scrapeAny = async () => (await call(cluster.url, "/metrics", { headers: auth })).body;
    const viewer = await openViewer(cluster.url);
    const before = await scrapeAny();
    const ticks = { kind: "plugin", id: "cl", method: "ticks" };
    const streams = await Promise.all(
      Array.from({ length: 4 }, () =>
        call(cluster.url, "/__rpc/plugin/cl/ticks", {
          method: "POST",
          viewer,
          headers: { "content-type": "application/json", "x-app-rpc-stream": "1" },
          body: JSON.stringify({ args: [2] }),
        }),
      ),
    );
    // Each answer ends with its terminal record, naming the worker that ran it: both did.
    const pids = streams.map((answer) => JSON.parse(answer.body.trim().split("\n").at(-1)!).result.pid as number);
    expect(new Set(pids).size).toBe(2);
    expect((await rpcCall(cluster.url, "plugin/cl/remember", viewer, ["kept"])).status).toBe(200);
    expect((await rpcCall(cluster.url, "plugin/cl/recall", viewer)).json.result.value).toBe("kept");

    const delta = (after: string, name: string, labels: Record<string, string>) => (sample(after, name, labels) ?? 0) - (sample(before, name, labels) ?? 0);
    for (const after of await Promise.all([scrapeAny(), scrapeAny()])) {
      expect(delta(after, "app_rpc_streams_started_total", ticks)).toBe(4);
      expect(delta(after, "app_rpc_streams_ended_total", { ...ticks, code: "OK" })).toBe(4);
      expect(delta(after, "app_rpc_stream_events_total", ticks)).toBe(8);
      expect(delta(after, "app_rpc_stream_duration_seconds_count", ticks)).toBe(4);
      // A worker's session data lives in the master: its store's kind is "cluster". Only
      // `remember` and `recall` load it: the streams never read ctx.session.
      expect(delta(after, "app_session_store_duration_seconds_count", { kind: "cluster", operation: "load" })).toBe(2);
      expect(delta(after, "app_session_store_duration_seconds_count", { kind: "cluster", operation: "save" })).toBe(1);
      expect(sample(after, "app_session_store_circuit_open", { kind: "cluster" })).toBe(0);
    }
  });
});
