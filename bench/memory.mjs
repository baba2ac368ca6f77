// Memory of the server process, each server pinned to the server core, load from this
// process on the load core (lib.mjs):
//   a. the demo (`node index.js`, default root) once started, after a few page, client and
//      RPC requests, then idle: its VmRSS;
//   b. the peak (VmHWM) of a proxy serving a 1 GiB download: from the proxy section when it
//      ran in this invocation, else measured here the same way (bench/proxy.mjs);
//   c. growth over many RPC echo calls (50 connections): RSS and heapUsed after a warm-up
//      against after 100 000 more calls, each sample taken after forced full collections
//      (bench/servers/memory-probe.mjs), so that the delta is what the calls left behind.
// Targets: (a) ≤ a bare Fastify 5 server on the same Node + 15 MB; (b) ≤ @fastify/reply-from's peak in the same run; (c) no growth, judged with a tolerance of 1 MB of heap
// and 5 MB of RSS (RSS also moves with the allocator and V8's heap sizing, not only leaks).
import { readFileSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { pathToFileURL } from "node:url";
import { REPO, descendants, load, memoryMb, printTable, startProcess, target, viewerSession } from "./lib.mjs";
import { benchProxyDownload } from "./proxy.mjs";
import { rpcOptions } from "./rpc.mjs";

const IDLE_SEC = Number(process.env.BENCH_IDLE_SEC ?? 3);
const WARMUP_CALLS = Number(process.env.BENCH_MEMORY_WARMUP_CALLS ?? 20_000);
const CALLS = Number(process.env.BENCH_MEMORY_CALLS ?? 100_000);
const PROBE = join(REPO, "bench/servers/memory-probe.mjs");

const sleep = (ms) => new Promise((resolve) => setTimeout(resolve, ms));
const MB = 1024 * 1024;

/** The demo after start, a little traffic and IDLE_SEC of rest. */
async function demoIdle() {
  const demo = await startProcess(join(REPO, "index.js"), ["--port", "$PORT"]);
  try {
    const pid = demo.child.pid;
    const atStartMb = memoryMb(pid, "VmRSS");
    const { cookie, csrf } = await viewerSession(demo.url);
    const headers = { cookie, "x-app-csrf": csrf, "content-type": "application/json" };
    for (let i = 0; i < 20; i += 1) {
      const answers = await Promise.all([
        fetch(`${demo.url}/__app/client.js`),
        fetch(`${demo.url}/app.js`),
        fetch(`${demo.url}/__rpc/plugin/greeter/greet`, { method: "POST", headers, body: JSON.stringify({ args: [{ name: `viewer ${i}` }] }) }),
        fetch(`${demo.url}/__rpc/plugin/greeter/ping`, { method: "POST", headers, body: "{}" }),
        fetch(`${demo.url}/__rpc/module/clock/whoami`, { method: "POST", headers, body: "{}" }),
      ]);
      for (const answer of answers) {
        if (answer.status !== 200) throw new Error(`demo answered ${answer.status} to ${answer.url}`);
        await answer.arrayBuffer();
      }
    }
    await sleep(IDLE_SEC * 1000);
    // Any helper processes the server started (an esbuild service for .ts files) have their
    // own RSS; they are listed apart so that the figure is the node process's own.
    const helpers = descendants(pid);
    const helpersMb = helpers.reduce((sum, child) => sum + (memoryMb(child, "VmRSS") || 0), 0);
    const names = helpers.map((child) => {
      try {
        return readFileSync(`/proc/${child}/comm`, "utf8").trim();
      } catch {
        return "?";
      }
    });
    return { atStartMb, idleMb: memoryMb(pid, "VmRSS"), hwmMb: memoryMb(pid, "VmHWM"), helpers: names.join(", ") || "none", helpersMb };
  } finally {
    await demo.stop();
  }
}

/**
 * The baseline for (a): a bare Fastify 5 server (bench/servers/fastify-rpc.mjs: one route
 * with the same cookie and CSRF checks) on the same Node, after the same kind of traffic
 * and rest. What the demo holds above it is the gateway's own.
 */
async function fastifyIdle() {
  const server = await startProcess(join(REPO, "bench/servers/fastify-rpc.mjs"), []);
  try {
    const options = await rpcOptions(server, "/rpc");
    for (let i = 0; i < 100; i += 1) {
      const answer = await fetch(options.url, { method: "POST", headers: options.headers, body: options.body });
      if (answer.status !== 200) throw new Error(`bare Fastify answered ${answer.status}`);
      await answer.arrayBuffer();
    }
    await sleep(IDLE_SEC * 1000);
    return { idleMb: memoryMb(server.child.pid, "VmRSS") };
  } finally {
    await server.stop();
  }
}

/** Asks the probe in `pid` for a sample and waits for it. */
async function probe(pid, file, previous) {
  process.kill(pid, "SIGUSR2");
  const deadline = Date.now() + 10_000;
  for (;;) {
    try {
      const sample = JSON.parse(readFileSync(file, "utf8"));
      if (sample.sample > previous) return sample;
    } catch {
      // Not written yet, or caught half-written.
    }
    if (Date.now() > deadline) throw new Error("the memory probe did not answer");
    await sleep(50);
  }
}

/** RSS and heap after WARMUP_CALLS echo calls, then after CALLS more. */
async function rpcGrowth() {
  const file = join(tmpdir(), `counterpart-bench-memory-${process.pid}.json`);
  const server = await startProcess(join(REPO, "index.js"), ["--port", "$PORT", "--root", join(REPO, "bench/app")], { BENCH_MEMORY_FILE: file }, "/health", {
    nodeArgs: ["--expose-gc", "--import", pathToFileURL(PROBE).href],
  });
  try {
    const pid = server.child.pid;
    const options = await rpcOptions(server, "/__rpc/plugin/bench/echo");
    const run = async (amount) => {
      const result = await load({ ...options, amount }); // `amount` overrides the duration
      const ok = result.statusCodeStats?.[200]?.count ?? 0;
      if (ok !== result.requests.total || result.errors > 0) throw new Error(`echo calls failed: ${JSON.stringify(result.statusCodeStats)}, ${result.errors} errors`);
      return ok;
    };
    await run(WARMUP_CALLS);
    await sleep(500); // the last log batch is written
    const before = await probe(pid, file, 0);
    const calls = await run(CALLS);
    await sleep(500);
    const after = await probe(pid, file, before.sample);
    return { calls, before, after };
  } finally {
    await server.stop();
    rmSync(file, { force: true });
  }
}

export async function benchMemory({ proxyDownload } = {}) {
  const demo = await demoIdle();
  const fastify = await fastifyIdle();
  printTable(`Demo server (node index.js, default root) on Node ${process.versions.node}, idle ${IDLE_SEC} s after 100 requests, against a bare Fastify 5 server`, [
    {
      "bare Fastify RSS idle (MB)": fastify.idleMb.toFixed(1),
      "RSS at start (MB)": demo.atStartMb.toFixed(1),
      "RSS idle (MB)": demo.idleMb.toFixed(1),
      "VmHWM (MB)": demo.hwmMb.toFixed(1),
      "helper processes": demo.helpers,
      "their RSS (MB)": demo.helpersMb.toFixed(1),
    },
  ]);

  const growth = await rpcGrowth();
  const rssDelta = (growth.after.vmRssKb - growth.before.vmRssKb) / 1024;
  const heapDelta = (growth.after.heapUsed - growth.before.heapUsed) / MB;
  printTable(`RPC echo, ${WARMUP_CALLS} warm-up calls then ${growth.calls} calls, 50 connections (samples after forced full GCs)`, [
    { sample: "after warm-up", "RSS (MB)": (growth.before.vmRssKb / 1024).toFixed(1), "heapUsed (MB)": (growth.before.heapUsed / MB).toFixed(2), "heapTotal (MB)": (growth.before.heapTotal / MB).toFixed(1), "external (MB)": (growth.before.external / MB).toFixed(2) },
    { sample: `after ${growth.calls} more`, "RSS (MB)": (growth.after.vmRssKb / 1024).toFixed(1), "heapUsed (MB)": (growth.after.heapUsed / MB).toFixed(2), "heapTotal (MB)": (growth.after.heapTotal / MB).toFixed(1), "external (MB)": (growth.after.external / MB).toFixed(2) },
  ]);
  const perCall = (growth.after.heapUsed - growth.before.heapUsed) / growth.calls;
  console.log(`\ndemo idle RSS: ${demo.idleMb.toFixed(1)} MB, bare Fastify ${fastify.idleMb.toFixed(1)} MB: +${(demo.idleMb - fastify.idleMb).toFixed(1)} MB (target <= +15 MB)`);
  console.log(`growth over ${growth.calls} calls: RSS ${rssDelta.toFixed(1)} MB, heapUsed ${heapDelta.toFixed(2)} MB (${perCall.toFixed(2)} bytes per call)`);

  const download = proxyDownload ?? (await benchProxyDownload());
  return {
    demo,
    growth,
    targets: [
      target("memory", "demo server idle RSS above a bare Fastify 5 server's (VmRSS)", demo.idleMb - fastify.idleMb, { max: 15 }, { digits: 1, unit: " MB" }),
      ...download.targets.filter((row) => row.section === "memory"),
      target("memory", `heapUsed growth over ${growth.calls} RPC calls`, heapDelta, { max: 1 }, { unit: " MB" }),
      target("memory", `RSS growth over ${growth.calls} RPC calls`, rssDelta, { max: 5 }, { digits: 1, unit: " MB" }),
    ],
  };
}

if (import.meta.url === `file://${process.argv[1]}`) await benchMemory();
