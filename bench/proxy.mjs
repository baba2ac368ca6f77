// The proxy against baselines measured in the same run. Every proxy is pinned to the server
// core; the upstream and the load generator (autocannon, the download client) share the load
// core, so the proxy being measured has its core to itself (lib.mjs).
//   1. Small GETs (1 KiB answers, 50 connections): the upstream directly, a minimal raw
//      node:http pass-through (bench/servers/raw-proxy.mjs, without and with the session +
//      CSRF check Counterpart's proxy must do), @fastify/reply-from with its defaults when
//      it is installed, and Counterpart's /proxy/<alias>/. All servers stay up and are
//      loaded in turn, round after round; each keeps its median round, with the server's
//      CPU time per request side by side.
//   2. A 1 GiB download through a fresh Counterpart process (and a fresh reply-from one)
//      against the upstream directly, with the proxy process's memory: its RSS before the
//      download, the highest RSS sampled during it, and VmHWM, the peak of its whole life.
// Targets: CPU per request ≤ 1.0× reply-from's (which checks no session, so the comparison
// errs against Counterpart); req/s ≥ 0.8× the raw pass-through's and ≥ 1.0× reply-from's;
// the download within 5× the direct time; VmHWM ≤ @fastify/reply-from's in the same run.
import { Agent, get } from "node:http";
import { mkdtempSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { REPO, ROUNDS, ROUND_SEC, interleaved, memoryMb, pairedRatio, printTable, ratio, startProcess, target, viewerSession } from "./lib.mjs";

const RAW = join(REPO, "bench/servers/raw-proxy.mjs");
const GIB = 1024 * 1024 * 1024;
const MB = 1024 * 1024;
/**
 * Small GETs a proxy serves before its download is measured. A proxy that has served a
 * few thousand answers has had its hot code optimised, undici's llhttp parser (WebAssembly)
 * included. That optimisation happens once per process and takes V8 about 30 MB of
 * compiler memory for a moment; a shorter warm-up lets it land in the middle of the
 * download and measures a one-off compile instead of what streaming costs. VmHWM still
 * covers the warm-up, so the compile's peak is in the figures either way.
 */
const WARM_UP_GETS = Number(process.env.BENCH_PROXY_WARM_UP_GETS ?? 2000);

async function sessionHeaders(url) {
  const { cookie, csrf } = await viewerSession(url);
  return { cookie, "x-app-csrf": csrf };
}

/**
 * Counterpart serving the proxy alone, as the reply-from server does: its root (bench/proxy-app)
 * holds a page and no plugin. The RPC bench's app would add its methods, and with them the
 * worker pool its isolated method starts with the server: a thread of its own, about 20 MB
 * resident, that no proxied byte goes through.
 */
function startCounterpart(configFile) {
  return startProcess(join(REPO, "index.js"), ["--port", "$PORT", "--root", join(REPO, "bench/proxy-app"), "--config", configFile]);
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

/** A GET read to its end; resolves to its status, size and duration. */
function download(url, headers = {}, agent = false) {
  const started = performance.now();
  return new Promise((resolve, reject) => {
    get(url, { headers, agent }, (res) => {
      let bytes = 0;
      res.on("data", (chunk) => (bytes += chunk.length));
      res.on("end", () => resolve({ status: res.statusCode, bytes, seconds: (performance.now() - started) / 1000 }));
      res.on("error", reject);
    }).on("error", reject);
  });
}

async function warmUp(url, headers) {
  const agent = new Agent({ keepAlive: true, maxSockets: 10 });
  try {
    for (let sent = 0; sent < WARM_UP_GETS; sent += 10) {
      await Promise.all(Array.from({ length: 10 }, () => download(`${url}/small`, headers, agent)));
    }
    await download(`${url}/big?bytes=${16 * MB}`, headers);
  } finally {
    agent.destroy();
  }
}

/** The 1 GiB download through a fresh proxy process, with that process's memory. */
async function downloadThrough(name, start, { session }) {
  const proxy = await start();
  try {
    const headers = session ? await sessionHeaders(proxy.url) : {};
    const base = `${proxy.url}/proxy/bench`;
    await warmUp(base, headers);
    const pid = proxy.child.pid;
    const idleMb = memoryMb(pid, "VmRSS");
    let sampledPeakMb = 0;
    const sampler = setInterval(() => (sampledPeakMb = Math.max(sampledPeakMb, memoryMb(pid, "VmRSS"))), 20);
    const result = await download(`${base}/big?bytes=${GIB}`, headers);
    clearInterval(sampler);
    return { name, ...result, idleMb, sampledPeakMb, hwmMb: memoryMb(pid, "VmHWM") };
  } finally {
    await proxy.stop();
  }
}

function smallGetContender(name, start, path, { session = true } = {}) {
  return {
    name,
    start,
    async options(server) {
      return { url: server.url + path, headers: session ? await sessionHeaders(server.url) : {} };
    },
  };
}

/** The upstream (on the load core) and a Counterpart config pointing its `bench` alias at it. */
async function withUpstream(run) {
  const dir = mkdtempSync(join(tmpdir(), "counterpart-bench-proxy-"));
  const upstream = await startProcess(RAW, ["upstream"], {}, "/small", { side: "load" });
  const configFile = join(dir, "app.config.json");
  writeFileSync(configFile, JSON.stringify({ server: { secure: { proxies: { bench: { baseUrl: upstream.url } } } } }));
  try {
    return await run({ dir, upstream, configFile, replyFrom: await replyFromModules() });
  } finally {
    await upstream.stop();
    rmSync(dir, { recursive: true, force: true });
  }
}

const NAMES = {
  raw: "raw node:http pass-through",
  rawSession: "raw pass-through + session/CSRF check",
  replyFrom: "@fastify/reply-from (defaults)",
  counterpart: "Counterpart /proxy/<alias>/",
};

async function smallGets({ dir, upstream, configFile, replyFrom: replyFromInstalled }) {
  const upstreamPort = new URL(upstream.url).port;
  const rows = await interleaved([
    smallGetContender("upstream direct", async () => ({ ...upstream, stop: async () => {} }), "/small", { session: false }),
    smallGetContender(NAMES.raw, () => startProcess(RAW, ["proxy", upstreamPort], {}, "/"), "/proxy/bench/small"),
    smallGetContender(NAMES.rawSession, () => startProcess(RAW, ["proxy", upstreamPort, "--session"], {}, "/"), "/proxy/bench/small"),
    ...(replyFromInstalled
      ? [smallGetContender(NAMES.replyFrom, () => startReplyFrom(replyFromInstalled, upstream.url, dir), "/proxy/bench/small", { session: false })]
      : []),
    smallGetContender(NAMES.counterpart, () => startCounterpart(configFile), "/proxy/bench/small"),
  ]);
  const byName = (name) => rows.find((row) => row.name === name);
  const [raw, rawSession, counterpart, replyFrom] = [NAMES.raw, NAMES.rawSession, NAMES.counterpart, NAMES.replyFrom].map(byName);

  printTable(`Proxy, small GETs (1 KiB answer), 50 connections, median of ${ROUNDS} interleaved ${ROUND_SEC}-second rounds`, rows);
  console.log("(the upstream shares the load core with autocannon: its own row is a reference, not a pinned measurement)");
  console.log(`\nCounterpart / raw pass-through req/s: ${ratio(counterpart.reqPerSec, raw.reqPerSec)} (target >= 0.8)`);
  console.log(`Counterpart / raw pass-through with the same session + CSRF check: ${ratio(counterpart.reqPerSec, rawSession.reqPerSec)}`);
  if (replyFrom) console.log(`Counterpart / @fastify/reply-from req/s: ${ratio(counterpart.reqPerSec, replyFrom.reqPerSec)} (target >= 1.0)`);
  else console.log("@fastify/reply-from row skipped: the package is not installed (npm install -D @fastify/reply-from to add it)");
  const cpuRatios = [["raw pass-through", raw], ["raw + session/CSRF", rawSession], ["reply-from (no session check)", replyFrom]]
    .filter(([, row]) => row)
    .map(([name, row]) => `${name} ${ratio(counterpart.cpuUsPerReq, row.cpuUsPerReq)}`);
  console.log(`Counterpart's CPU time per request against: ${cpuRatios.join(", ")} (medians; target against reply-from <= 1.0)`);
  if (replyFrom) console.log(`Counterpart / reply-from, CPU per request paired by round: ${pairedRatio(counterpart, replyFrom).toFixed(2)}`);
  return {
    rows,
    targets: [
      target("proxy", "proxy / reply-from, CPU µs per request (paired by round)", replyFrom ? pairedRatio(counterpart, replyFrom) : NaN, { max: 1.0 }),
      target("proxy", "proxy / reply-from, req/s", replyFrom ? counterpart.reqPerSec / replyFrom.reqPerSec : NaN, { min: 1.0 }),
      target("proxy", "proxy / raw pass-through, req/s", counterpart.reqPerSec / raw.reqPerSec, { min: 0.8 }),
      target("proxy", "proxy / raw pass-through + session check, CPU µs per request", counterpart.cpuUsPerReq / rawSession.cpuUsPerReq),
      target("proxy", "proxy CPU µs per request", counterpart.cpuUsPerReq, {}, { digits: 1 }),
      target("proxy", "reply-from CPU µs per request", replyFrom?.cpuUsPerReq ?? NaN, {}, { digits: 1 }),
    ],
  };
}

async function bigDownload({ dir, upstream, configFile, replyFrom: replyFromInstalled }) {
  await download(`${upstream.url}/big?bytes=${16 * MB}`); // warm-up
  const direct = { name: "upstream direct", ...(await download(`${upstream.url}/big?bytes=${GIB}`)) };
  const through = await downloadThrough("through Counterpart", () => startCounterpart(configFile), { session: true });
  const throughReplyFrom = replyFromInstalled
    ? await downloadThrough("through @fastify/reply-from", () => startReplyFrom(replyFromInstalled, upstream.url, dir), { session: false })
    : null;
  const mb = (value) => (value === undefined ? "" : value.toFixed(0));
  printTable(
    `Proxy, 1 GiB download (each proxy a fresh process, warmed up with ${WARM_UP_GETS} small GETs and 16 MiB)`,
    [direct, through, throughReplyFrom].filter(Boolean).map((row) => ({
      path: row.name,
      status: row.status,
      bytes: row.bytes,
      seconds: row.seconds.toFixed(2),
      "MiB/s": Math.round(row.bytes / MB / row.seconds),
      "RSS before (MB)": mb(row.idleMb),
      "peak during (MB)": mb(row.sampledPeakMb),
      "VmHWM (MB)": mb(row.hwmMb),
    })),
  );
  console.log(`\nthrough Counterpart / direct time: ${ratio(through.seconds, direct.seconds)} (target <= 5)`);
  console.log(`Counterpart's peak RSS (VmHWM, whole process life): ${through.hwmMb.toFixed(0)} MB`);
  if (throughReplyFrom) console.log(`Counterpart / reply-from, peak RSS: ${ratio(through.hwmMb, throughReplyFrom.hwmMb)} (target <= 1.0)`);
  const complete = through.status === 200 && through.bytes === GIB;
  return {
    direct,
    through,
    throughReplyFrom,
    targets: [
      target("proxy", "1 GiB through the proxy / direct, time", complete ? through.seconds / direct.seconds : NaN, { max: 5 }),
      target("memory", "proxy peak RSS (VmHWM) with a 1 GiB download", complete ? through.hwmMb : NaN, {}, { digits: 0, unit: " MB" }),
      target("memory", "reply-from peak RSS (VmHWM), same download", throughReplyFrom?.hwmMb ?? NaN, {}, { digits: 0, unit: " MB" }),
      target("memory", "proxy peak RSS / reply-from's, 1 GiB download", complete && throughReplyFrom ? through.hwmMb / throughReplyFrom.hwmMb : NaN, { max: 1.0 }),
    ],
  };
}

/** Small GETs and the 1 GiB download. */
export async function benchProxy() {
  return withUpstream(async (setup) => {
    const small = await smallGets(setup);
    const big = await bigDownload(setup);
    return { rows: small.rows, download: big, targets: [...small.targets, ...big.targets] };
  });
}

/** Only the 1 GiB download: the memory section's peak figure when the proxy section is not run. */
export const benchProxyDownload = () => withUpstream(bigDownload);

if (import.meta.url === `file://${process.argv[1]}`) await benchProxy();
