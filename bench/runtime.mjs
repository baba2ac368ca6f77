// Worker isolation and concurrency limits on one gateway process (bench/runtime-app, its own
// root so that the other sections run without an isolation pool), pinned to the server core
// (its isolation threads share that core); the load is undici loops in this process, on the
// load core (lib.mjs):
//   1. the extra median latency of an isolated call over the same method inline, 1 connection;
//   2. a method limited to 4 concurrent calls (queue 100) under 200 connections: overall
//      req/s, and how fast the 429 refusals come back.
// Targets: isolation adds < 1 ms median; p99 of the 429 answers < 20 ms.
import { join } from "node:path";
import { Pool } from "undici";
import { REPO, DURATION_SEC, percentile, printTable, startProcess, target, viewerSession } from "./lib.mjs";

const BODY = JSON.stringify({ args: [{ message: "hello, runtime", n: 42, ok: true }] });

/** `connections` loops sending the same call for `seconds`; latency kept per status. */
async function hammer(url, path, headers, connections, seconds) {
  const pool = new Pool(url, { connections, pipelining: 1 });
  const byStatus = new Map();
  const stopAt = performance.now() + seconds * 1000;
  let total = 0;
  const loop = async () => {
    while (performance.now() < stopAt) {
      const started = performance.now();
      const response = await pool.request({ path, method: "POST", headers, body: BODY });
      await response.body.dump();
      const ms = performance.now() - started;
      if (!byStatus.has(response.statusCode)) byStatus.set(response.statusCode, []);
      byStatus.get(response.statusCode).push(ms);
      total += 1;
    }
  };
  await Promise.all(Array.from({ length: connections }, loop));
  await pool.close();
  for (const list of byStatus.values()) list.sort((a, b) => a - b);
  return { total, reqPerSec: Math.round(total / seconds), byStatus };
}

const fixed = (value) => (Number.isFinite(value) ? value.toFixed(3) : "n/a");

export async function benchRuntime() {
  const server = await startProcess(join(REPO, "index.js"), ["--port", "$PORT", "--root", join(REPO, "bench/runtime-app")]);
  try {
    const { cookie, csrf } = await viewerSession(server.url);
    const headers = { cookie, "x-app-csrf": csrf, "content-type": "application/json" };
    const rows = [];
    for (const method of ["inlineEcho", "isolatedEcho"]) {
      await hammer(server.url, `/__rpc/plugin/bench/${method}`, headers, 1, 1); // warm-up
      const run = await hammer(server.url, `/__rpc/plugin/bench/${method}`, headers, 1, Math.min(DURATION_SEC, 5));
      const ok = run.byStatus.get(200) ?? [];
      rows.push({ method, calls: run.total, p50Ms: fixed(percentile(ok, 50)), p99Ms: fixed(percentile(ok, 99)) });
    }
    printTable("Isolated vs inline echo, 1 connection", rows);
    const extra = Number(rows[1].p50Ms) - Number(rows[0].p50Ms);
    console.log(`\nextra median latency of isolation: ${extra.toFixed(3)} ms (target < 1 ms)`);

    const limited = await hammer(server.url, "/__rpc/plugin/bench/limited", headers, 200, DURATION_SEC);
    const ok = limited.byStatus.get(200) ?? [];
    const refused = limited.byStatus.get(429) ?? [];
    printTable("maxConcurrency 4, queueLimit 100, method takes 20 ms, 200 connections", [
      {
        reqPerSec: limited.reqPerSec,
        ok200: ok.length,
        refused429: refused.length,
        p50Ok: fixed(percentile(ok, 50)),
        p99Ok: fixed(percentile(ok, 99)),
        p50Refused: fixed(percentile(refused, 50)),
        p99Refused: fixed(percentile(refused, 99)),
      },
    ]);
    console.log(`\np99 latency of 429 answers: ${fixed(percentile(refused, 99))} ms (target < 20 ms)`);
    return {
      rows,
      limited,
      targets: [
        target("runtime", "isolated call, extra median latency", extra, { max: 1 }, { digits: 3, unit: " ms" }),
        target("runtime", "p99 of 429s, 200 connections on a 4-slot method", percentile(refused, 99), { max: 20 }, { unit: " ms" }),
      ],
    };
  } finally {
    await server.stop();
  }
}

if (import.meta.url === `file://${process.argv[1]}`) await benchRuntime();
