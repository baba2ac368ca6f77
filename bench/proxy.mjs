// Issue 4 benchmark: the proxy against baselines measured in the same run.
//   1. Small GETs (1 KiB answers, 50 connections): the upstream directly, a minimal raw
//      node:http pass-through (bench/servers/raw-proxy.mjs, without and with the session +
//      CSRF check Counterpart's proxy must do), @fastify/reply-from with its defaults when
//      it is installed, and Counterpart's /proxy/<alias>/.
//   2. A 1 GiB download through a fresh Counterpart process against the upstream directly,
//      with the proxy process's peak RSS (/proc/<pid>/status).
// Targets: >= 0.8 of the raw pass-through's req/s, >= 1.0 of reply-from's; the download
// within 5x the direct time; peak RSS under 150 MB.
import { get } from "node:http";
import { mkdtempSync, readFileSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { REPO, load, printTable, ratio, startProcess, summary, viewerSession } from "./lib.mjs";

const RAW = join(REPO, "bench/servers/raw-proxy.mjs");
const GIB = 1024 * 1024 * 1024;
const MB = 1024 * 1024;
const ROUNDS = Number(process.env.BENCH_PROXY_ROUNDS ?? 2);

async function measure(name, server, path, { session = true } = {}) {
  try {
    const headers = session ? await sessionHeaders(server.url) : {};
    const url = server.url + path;
    await load({ url, headers, duration: 2 }); // warm-up
    return { name, ...summary(await load({ url, headers })) };
  } finally {
    await server.stop();
  }
}

async function sessionHeaders(url) {
  const { cookie, csrf } = await viewerSession(url);
  return { cookie, "x-app-csrf": csrf };
}

function startCounterpart(configFile) {
  return startProcess(join(REPO, "index.js"), ["--port", "$PORT", "--root", join(REPO, "bench/app"), "--config", configFile]);
}

/** Where fastify and @fastify/reply-from resolve from here, or null when reply-from is not installed. */
async function replyFromModules() {
  try {
    const modules = { replyFrom: import.meta.resolve("@fastify/reply-from"), fastify: import.meta.resolve("fastify") };
    await import(modules.replyFrom);
    return modules;
  } catch {
    return null;
  }
}

/** A Fastify server with @fastify/reply-from and its defaults, forwarding /proxy/bench/*. */
function startReplyFrom(modules, upstreamUrl, dir) {
  const script = join(dir, "reply-from.mjs");
  writeFileSync(
    script,
    `import Fastify from ${JSON.stringify(modules.fastify)};
import replyFrom from ${JSON.stringify(modules.replyFrom)};
const app = Fastify();
await app.register(replyFrom, { base: ${JSON.stringify(upstreamUrl)} });
app.get("/", (_req, reply) => reply.send("ok"));
app.all("/proxy/bench/*", (req, reply) => reply.from(req.url.slice("/proxy/bench".length)));
await app.listen({ port: Number(process.env.PORT), host: "127.0.0.1" });
`,
  );
  return startProcess(script, [], {}, "/");
}

function download(url, headers = {}) {
  const started = performance.now();
  return new Promise((resolve, reject) => {
    get(url, { headers, agent: false }, (res) => {
      let bytes = 0;
      res.on("data", (chunk) => (bytes += chunk.length));
      res.on("end", () => resolve({ status: res.statusCode, bytes, seconds: (performance.now() - started) / 1000 }));
      res.on("error", reject);
    }).on("error", reject);
  });
}

function memoryKb(pid, field) {
  const match = new RegExp(`^${field}:\\s+(\\d+) kB`, "m").exec(readFileSync(`/proc/${pid}/status`, "utf8"));
  return match ? Number(match[1]) : NaN;
}

async function benchDownload(upstream, configFile) {
  const path = `/big?bytes=${GIB}`;
  await download(`${upstream.url}/big?bytes=${16 * MB}`); // warm-up
  const direct = await download(upstream.url + path);
  const proxy = await startCounterpart(configFile);
  try {
    const headers = await sessionHeaders(proxy.url);
    await download(`${proxy.url}/proxy/bench/big?bytes=${16 * MB}`, headers); // warm-up
    const pid = proxy.child.pid;
    const idleRssMb = memoryKb(pid, "VmRSS") / 1024;
    let sampledPeakKb = 0;
    const sampler = setInterval(() => (sampledPeakKb = Math.max(sampledPeakKb, memoryKb(pid, "VmRSS"))), 20);
    const through = await download(`${proxy.url}/proxy/bench${path}`, headers);
    clearInterval(sampler);
    const hwmMb = memoryKb(pid, "VmHWM") / 1024;
    return { direct, through, idleRssMb, sampledPeakMb: sampledPeakKb / 1024, hwmMb };
  } finally {
    await proxy.stop();
  }
}

export async function benchProxy() {
  const dir = mkdtempSync(join(tmpdir(), "counterpart-bench-proxy-"));
  const upstream = await startProcess(RAW, ["upstream"], {}, "/small");
  const upstreamPort = new URL(upstream.url).port;
  const configFile = join(dir, "app.config.json");
  writeFileSync(configFile, JSON.stringify({ server: { secure: { proxies: { bench: { baseUrl: upstream.url } } } } }));
  try {
    // The contenders take turns, ROUNDS times, and each keeps its best round: on a small
    // shared machine a burst of other work then penalises no single row.
    const replyFromInstalled = await replyFromModules();
    const contenders = [
      { name: "upstream direct", start: async () => ({ ...upstream, stop: async () => {} }), path: "/small", session: false },
      { name: "raw node:http pass-through", start: () => startProcess(RAW, ["proxy", upstreamPort], {}, "/"), path: "/proxy/bench/small" },
      { name: "raw pass-through + session/CSRF check", start: () => startProcess(RAW, ["proxy", upstreamPort, "--session"], {}, "/"), path: "/proxy/bench/small" },
      ...(replyFromInstalled
        ? [{ name: "@fastify/reply-from (defaults)", start: () => startReplyFrom(replyFromInstalled, upstream.url, dir), path: "/proxy/bench/small", session: false }]
        : []),
      { name: "Counterpart /proxy/<alias>/", start: () => startCounterpart(configFile), path: "/proxy/bench/small" },
    ];
    const best = new Map();
    for (let round = 0; round < ROUNDS; round += 1) {
      for (const contender of contenders) {
        const row = await measure(contender.name, await contender.start(), contender.path, { session: contender.session !== false });
        if (!best.has(contender.name) || row.reqPerSec > best.get(contender.name).reqPerSec) best.set(contender.name, row);
      }
    }
    const rows = contenders.map((contender) => best.get(contender.name));
    const [raw, rawSession, counterpart] = ["raw node:http pass-through", "raw pass-through + session/CSRF check", "Counterpart /proxy/<alias>/"].map((name) => best.get(name));
    const replyFrom = best.get("@fastify/reply-from (defaults)") ?? null;

    printTable(`Proxy, small GETs (1 KiB answer), 50 connections, best of ${ROUNDS} interleaved rounds`, rows);
    console.log(`\nCounterpart / raw pass-through req/s: ${ratio(counterpart.reqPerSec, raw.reqPerSec)} (target >= 0.8)`);
    console.log(`Counterpart / raw pass-through with the same session + CSRF check: ${ratio(counterpart.reqPerSec, rawSession.reqPerSec)}`);
    if (replyFrom) console.log(`Counterpart / @fastify/reply-from req/s: ${ratio(counterpart.reqPerSec, replyFrom.reqPerSec)} (target >= 1.0)`);
    else console.log("@fastify/reply-from row skipped: the package is not installed (npm install -D @fastify/reply-from to add it)");

    const big = await benchDownload(upstream, configFile);
    const mbps = (result) => Math.round(result.bytes / MB / result.seconds);
    printTable("Proxy, 1 GiB download", [
      { path: "upstream direct", status: big.direct.status, bytes: big.direct.bytes, seconds: big.direct.seconds.toFixed(2), "MiB/s": mbps(big.direct) },
      { path: "through Counterpart", status: big.through.status, bytes: big.through.bytes, seconds: big.through.seconds.toFixed(2), "MiB/s": mbps(big.through) },
    ]);
    console.log(`\nthrough / direct time: ${ratio(big.through.seconds, big.direct.seconds)} (target <= 5)`);
    console.log(
      `proxy process RSS: idle ${big.idleRssMb.toFixed(0)} MB, peak sampled during the download ${big.sampledPeakMb.toFixed(0)} MB, VmHWM ${big.hwmMb.toFixed(0)} MB (target < 150 MB)`,
    );
    return { rows, download: big };
  } finally {
    await upstream.stop();
    rmSync(dir, { recursive: true, force: true });
  }
}

if (import.meta.url === `file://${process.argv[1]}`) await benchProxy();
