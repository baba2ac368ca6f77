// Shared benchmark plumbing: core pinning, starting a server process on a free port, loading
// it from this process (autocannon, or undici loops), the server's CPU time per request, and
// tables.
//
// Pinning: the servers run on BENCH_SERVER_CPUS (default CPU 1, through `taskset -c`), this
// process — the load generator — on BENCH_LOAD_CPUS (default CPU 0, through `taskset -a -p`
// on itself). See pinning() for why this process is pinned rather than autocannon moved out.
import { execFileSync, spawn, spawnSync } from "node:child_process";
import { readFileSync, readdirSync, writeFileSync } from "node:fs";
import { createServer } from "node:net";
import { tmpdir } from "node:os";
import { fileURLToPath } from "node:url";
import { basename, dirname, join } from "node:path";
import autocannon from "autocannon";
import { Pool } from "undici";

export const REPO = join(dirname(fileURLToPath(import.meta.url)), "..");
export const SESSION_SECRET = "bench-session-secret-with-at-least-32-bytes";
export const DURATION_SEC = Number(process.env.BENCH_DURATION_SEC ?? 8);
/** Interleaved measurements: how many rounds per contender, and how long each round lasts. */
export const ROUNDS = Number(process.env.BENCH_ROUNDS ?? 5);
export const ROUND_SEC = Number(process.env.BENCH_ROUND_SEC ?? 3);
/** Load before the first measured round: JIT, caches and connection pools settle first. */
export const WARMUP_SEC = Number(process.env.BENCH_WARMUP_SEC ?? 2);
export const CONNECTIONS = 50;

/**
 * `--config` arguments for a gateway: `file` as it is, or (`BENCH_METRICS=1`) a copy of it
 * (of `{}` without one) with `server.metrics.enabled`, which nobody scrapes: what recording
 * metrics costs the request path (docs/reference/benchmarks.md).
 */
export function gatewayConfigArgs(file) {
  if (process.env.BENCH_METRICS !== "1") return file ? ["--config", file] : [];
  const base = file ? JSON.parse(readFileSync(file, "utf8")) : {};
  const copy = join(tmpdir(), `counterpart-bench-metrics-${basename(file ?? "app.config.json")}`);
  writeFileSync(copy, JSON.stringify({ ...base, server: { ...base.server, metrics: { enabled: true } } }));
  return ["--config", copy];
}

// ---------------------------------------------------------------------------------------
// Core pinning

/** "0-2,5" -> [0, 1, 2, 5] */
function cpuList(text) {
  const out = [];
  for (const part of String(text).trim().split(",")) {
    const [from, to = from] = part.split("-").map(Number);
    for (let cpu = from; cpu <= to; cpu += 1) out.push(cpu);
  }
  return out.filter(Number.isInteger);
}

let pinned;

/**
 * Decides the pinning once and pins this process. This process, not a child, is pinned to
 * the load core because everything it does during a measurement is load generation:
 * autocannon, the undici loops of the runtime section and the 1 GiB download client. One
 * `taskset -a -p` covers all of them (`-a`: the threads Node started before this call too;
 * later threads inherit), and the loads stay in-process, where each answer's status and
 * latency can be read (the 429s apart from the 200s) without passing results over IPC.
 * Servers get the other core at exec through `taskset -c`, inherited by a cluster's workers.
 * Returns `{ enabled, loadCpus, serverCpus, note }`.
 */
export function pinning() {
  if (pinned) return pinned;
  const loadCpus = process.env.BENCH_LOAD_CPUS ?? "0";
  const serverCpus = process.env.BENCH_SERVER_CPUS ?? "1";
  const allowed = cpuList(/^Cpus_allowed_list:\s*(.+)$/m.exec(readFileSync("/proc/self/status", "utf8"))?.[1] ?? "");
  const unpinned = (why) => ({ enabled: false, loadCpus: null, serverCpus: null, note: `WARNING: not pinned (${why}); servers and the load generator share the cores, so req/s and latency depend on the scheduler; CPU per request still counts the server's own time only` });
  if (process.env.BENCH_PIN === "0") pinned = unpinned("BENCH_PIN=0");
  else if (spawnSync("taskset", ["-V"]).error) pinned = unpinned("taskset not found; it is in util-linux");
  else if (allowed.length < 2) pinned = unpinned(`only ${allowed.length} CPU available to this process`);
  else {
    const wanted = [...cpuList(loadCpus), ...cpuList(serverCpus)];
    const missing = wanted.filter((cpu) => !allowed.includes(cpu));
    const overlap = cpuList(loadCpus).some((cpu) => cpuList(serverCpus).includes(cpu));
    if (missing.length > 0) pinned = unpinned(`CPU ${missing.join(",")} not available; allowed: ${allowed.join(",")}`);
    else if (overlap) pinned = unpinned(`BENCH_LOAD_CPUS ${loadCpus} and BENCH_SERVER_CPUS ${serverCpus} overlap`);
    else {
      const result = spawnSync("taskset", ["-a", "-c", "-p", loadCpus, String(process.pid)], { encoding: "utf8" });
      pinned =
        result.status === 0
          ? { enabled: true, loadCpus, serverCpus, note: `pinned: servers on CPU ${serverCpus} (taskset -c), load generator (this process) on CPU ${loadCpus} (taskset -a -p)` }
          : unpinned(`taskset -p failed: ${(result.stderr || "").trim()}`);
    }
  }
  return pinned;
}

/** How to exec `command` on the given side: `taskset -c <cpus> command ...` when pinned. */
export function pinnedCommand(side, command, args) {
  const pins = pinning();
  if (!pins.enabled) return [command, args];
  return ["taskset", ["-c", side === "load" ? pins.loadCpus : pins.serverCpus, command, ...args]];
}

/** How to exec `node` on the given side: `taskset -c <cpus> node ...` when pinned. */
function nodeCommand(side, nodeArgs) {
  return pinnedCommand(side, process.execPath, nodeArgs);
}

// ---------------------------------------------------------------------------------------
// Processes

export async function freePort() {
  const server = createServer();
  await new Promise((resolve) => server.listen(0, "127.0.0.1", resolve));
  const { port } = server.address();
  await new Promise((resolve) => server.close(resolve));
  return port;
}

/**
 * Spawns `node [nodeArgs] <script> ...args` (stdout discarded) pinned to the server core, or
 * to the load core with `side: "load"` (an upstream the proxy is measured against belongs to
 * the load side: the proxy keeps its core to itself), and waits for `readyPath` to answer.
 * taskset execs node in place, so `child.pid` is the node process.
 */
export async function startProcess(script, args, env = {}, readyPath = "/health", { side = "server", nodeArgs = [] } = {}) {
  const port = await freePort();
  const [command, prefix] = nodeCommand(side, nodeArgs);
  const child = spawn(command, [...prefix, script, ...args.map((arg) => String(arg).replace("$PORT", port))], {
    cwd: REPO,
    env: { ...process.env, APP_SESSION_SECRET: SESSION_SECRET, PORT: String(port), ...env },
    stdio: ["ignore", "ignore", "inherit"],
  });
  const url = `http://127.0.0.1:${port}`;
  const deadline = Date.now() + 30_000;
  for (;;) {
    try {
      const response = await fetch(url + readyPath);
      await response.arrayBuffer();
      break;
    } catch {
      if (Date.now() > deadline || child.exitCode !== null) {
        child.kill("SIGKILL");
        throw new Error(`${script} did not start`);
      }
      await new Promise((resolve) => setTimeout(resolve, 100));
    }
  }
  await settle(child.pid);
  return {
    url,
    child,
    async stop() {
      if (child.exitCode !== null || child.signalCode !== null) return;
      child.kill("SIGTERM");
      await new Promise((resolve) => child.once("exit", resolve));
    },
  };
}

/**
 * Waits until the process tree has finished starting: answering /health is not the end of
 * it (a cluster's other workers are still loading, modules are still being compiled), and
 * that CPU time must not land in the first measured round.
 */
async function settle(pid, { idleShare = 0.05, stepMs = 250, maxMs = 15_000 } = {}) {
  const deadline = Date.now() + maxMs;
  let before = cpuMicros(pid);
  while (Date.now() < deadline) {
    await new Promise((resolve) => setTimeout(resolve, stepMs));
    const now = cpuMicros(pid);
    if (!(now - before > idleShare * stepMs * 1000)) return;
    before = now;
  }
}

/** A server started elsewhere, handed to several contenders: only its owner stops it. */
export const borrowed = (server) => ({ ...server, stop: async () => {} });

/** A viewer session on a running server: cookie and CSRF token from its page. */
export async function viewerSession(url) {
  const response = await fetch(url + "/");
  const cookie = response.headers.get("set-cookie").split(";")[0];
  const csrf = /APP_CSRF_TOKEN = "([^"]+)"/.exec(await response.text())[1];
  return { cookie, csrf };
}

// ---------------------------------------------------------------------------------------
// Measuring

/** One autocannon run (50 connections and DURATION_SEC unless `options` say otherwise). */
export function load(options) {
  return new Promise((resolve, reject) => {
    autocannon({ duration: DURATION_SEC, connections: CONNECTIONS, ...options }, (error, result) => (error ? reject(error) : resolve(result)));
  });
}

/**
 * The same load from undici loops, for answers that close their connection: autocannon
 * writes its next request on the socket the server is closing, loses it, and mixes up
 * the latencies; undici opens a new connection as a browser would. Latencies are kept per
 * status (a fast 429 must not hide a slow 200). Returns the fields of an autocannon result
 * that the rounds read, plus `byStatus` and `connects`, the connections opened.
 */
export async function undiciLoad({ url, method = "GET", headers, body, connections = CONNECTIONS, duration = DURATION_SEC }) {
  const target = new URL(url);
  const pool = new Pool(target.origin, { connections, pipelining: 1 });
  let connects = 0;
  pool.on("connect", () => (connects += 1));
  const byStatus = new Map();
  const path = target.pathname + target.search;
  let errors = 0;
  const started = performance.now();
  const stopAt = started + duration * 1000;
  const loop = async () => {
    while (performance.now() < stopAt) {
      const sent = performance.now();
      try {
        const response = await pool.request({ path, method, headers, body });
        await response.body.dump();
        const ms = performance.now() - sent;
        if (!byStatus.has(response.statusCode)) byStatus.set(response.statusCode, []);
        byStatus.get(response.statusCode).push(ms);
      } catch {
        errors += 1;
      }
    }
  };
  await Promise.all(Array.from({ length: connections }, loop));
  const seconds = (performance.now() - started) / 1000;
  await pool.close();
  const all = [...byStatus.values()].flat().sort((a, b) => a - b);
  const statusCodeStats = Object.fromEntries([...byStatus].map(([status, list]) => [status, { count: list.length }]));
  return {
    requests: { total: all.length },
    duration: seconds,
    latency: { p50: percentile(all, 50), p99: percentile(all, 99) },
    errors,
    timeouts: 0,
    statusCodeStats,
    byStatus,
    connects,
  };
}

export function percentile(sorted, p) {
  if (sorted.length === 0) return NaN;
  return sorted[Math.min(sorted.length - 1, Math.floor((p / 100) * sorted.length))];
}

export function summary(result) {
  return {
    reqPerSec: Math.round(result.requests.total / result.duration),
    p50Ms: result.latency.p50,
    p99Ms: result.latency.p99,
    errors: result.errors + result.timeouts,
  };
}

/** Share of each status among the answers, e.g. "429:97% 200:3%". */
function statusMix(result) {
  const total = result.requests.total || 1;
  return Object.entries(result.statusCodeStats ?? {})
    .sort((a, b) => b[1].count - a[1].count)
    .map(([status, { count }]) => `${status}:${Math.round((100 * count) / total)}%`)
    .join(" ");
}

/** USER_HZ: the unit of /proc/<pid>/stat's CPU times (100 on every usual Linux). */
const CLOCK_TICKS_PER_SEC = (() => {
  try {
    return Number(execFileSync("getconf", ["CLK_TCK"], { encoding: "utf8" }).trim()) || 100;
  } catch {
    return 100;
  }
})();

/** /proc/<pid>/stat fields from the state on ([0] state, [1] ppid, [11] utime, ...). */
function statFields(pid) {
  // The command name may hold spaces and ")", so fields are counted from after its last ")".
  const line = readFileSync(`/proc/${pid}/stat`, "utf8");
  return line.slice(line.lastIndexOf(")") + 2).split(" ");
}

/** Every live descendant of `pid` (a cluster's workers, an esbuild service...). */
export function descendants(pid) {
  const children = new Map();
  for (const name of readdirSync("/proc")) {
    if (!/^\d+$/.test(name)) continue;
    try {
      const ppid = Number(statFields(name)[1]);
      if (!children.has(ppid)) children.set(ppid, []);
      children.get(ppid).push(Number(name));
    } catch {
      // The process ended while the list was read.
    }
  }
  const out = [];
  const stack = [pid];
  while (stack.length > 0) for (const child of children.get(stack.pop()) ?? []) stack.push(child), out.push(child);
  return out;
}

/**
 * CPU time (user + system, every thread) used so far by `pid` and its descendants, in
 * microseconds; NaN when unknown. The tree matters for a cluster: the master and each
 * worker. cutime/cstime add the children already ended and reaped (a restarted worker),
 * which would otherwise drop out of the delta.
 */
export function cpuMicros(pid) {
  if (!pid) return NaN;
  try {
    const own = statFields(pid);
    let ticks = Number(own[11]) + Number(own[12]) + Number(own[13]) + Number(own[14]);
    for (const child of descendants(pid)) {
      try {
        const fields = statFields(child);
        ticks += Number(fields[11]) + Number(fields[12]);
      } catch {
        // Ended between the listing and now: its time is in its parent's cutime once reaped.
      }
    }
    return (ticks * 1e6) / CLOCK_TICKS_PER_SEC;
  } catch {
    return NaN;
  }
}

/**
 * Busy time (everything but idle and iowait) of the given CPUs so far, in microseconds,
 * from /proc/stat; NaN when unknown. Set against the server's own CPU time it shows how
 * much of the server core other processes took during a round: on a shared machine, the
 * sign that a round's figures are noisy.
 */
export function cpusBusyMicros(cpus) {
  if (!cpus) return NaN;
  try {
    const wanted = new Set(cpuList(cpus).map((cpu) => `cpu${cpu}`));
    let ticks = 0;
    for (const line of readFileSync("/proc/stat", "utf8").split("\n")) {
      const [name, ...values] = line.trim().split(/\s+/);
      if (!wanted.has(name)) continue;
      const [user, nice, system, , , irq, softirq, steal] = values.map(Number); // idle, iowait skipped
      ticks += user + nice + system + irq + softirq + steal;
    }
    return (ticks * 1e6) / CLOCK_TICKS_PER_SEC;
  } catch {
    return NaN;
  }
}

/** A /proc/<pid>/status memory field (VmRSS, VmHWM...) in MB; NaN when unknown. */
export function memoryMb(pid, field) {
  try {
    const match = new RegExp(`^${field}:\\s+(\\d+) kB`, "m").exec(readFileSync(`/proc/${pid}/status`, "utf8"));
    return match ? Number(match[1]) / 1024 : NaN;
  } catch {
    return NaN;
  }
}

/**
 * One load round with the server's CPU time per answer, and how busy each side was:
 * `srvCpu%` near 100 means the server's core was the limit, `genCpu%` near 100 that the
 * load generator was (then req/s says more about autocannon than about the server, and
 * CPU per request is the figure to read).
 */
async function measuredRound(entry, duration) {
  const pid = entry.server.child?.pid;
  const serverCpus = pinning().serverCpus;
  const cpuBefore = cpuMicros(pid);
  const busyBefore = cpusBusyMicros(serverCpus);
  const genBefore = process.cpuUsage();
  const started = performance.now();
  const result =
    entry.client === "undici" ? await undiciLoad({ ...entry.options, duration }) : await load({ ...entry.options, duration });
  const wallUs = (performance.now() - started) * 1000;
  const serverUs = cpuMicros(pid) - cpuBefore;
  const busyUs = cpusBusyMicros(serverCpus) - busyBefore;
  const gen = process.cpuUsage(genBefore);
  const answers = result.requests.total;
  const p99ByStatus = {};
  for (const [status, list] of result.byStatus ?? []) p99ByStatus[status] = percentile(list.sort((a, b) => a - b), 99);
  return {
    ...summary(result),
    cpuUsPerReq: answers > 0 ? serverUs / answers : NaN,
    srvCpuPct: (100 * serverUs) / wallUs,
    genCpuPct: (100 * (gen.user + gen.system)) / wallUs,
    otherPct: Math.max(0, (100 * (busyUs - serverUs)) / wallUs),
    statuses: statusMix(result),
    connsPerReq: result.connects === undefined ? NaN : result.connects / Math.max(1, answers),
    p99ByStatus,
  };
}

let worstOtherPct = 0;
/** The largest share of the server core other processes took in any round so far (%). */
export const worstNoise = () => worstOtherPct;

const median = (values) => {
  const sorted = values.filter(Number.isFinite).sort((a, b) => a - b);
  return sorted.length === 0 ? NaN : sorted[Math.floor(sorted.length / 2)];
};

/**
 * Loads each contender in turn, `rounds` short rounds each, and keeps each one's median
 * round. On a shared machine a burst of other work then weighs on every contender alike
 * instead of on whichever happened to run during it; the rounds' req/s are printed too, so
 * the spread is visible. `cpuUsPerReq` is the median over the rounds of the server's CPU
 * time per answer: what one request costs the server, the figure that depends least on how
 * the load generator and the server shared the machine.
 * A contender is `{ name, start() -> server, options(server) -> autocannon options,
 * client? }` (`client: "undici"`: undiciLoad() instead of autocannon); a server shared by
 * several contenders is started once and `borrowed()`.
 *
 * By default every server is up at once for all the rounds. With `freshProcesses`, each
 * round runs each contender in a process of its own, started for the round (in the round's
 * order) and stopped after it: on a virtual machine the same server's CPU per call differs
 * from one process to the next by up to a third, steadily for the process's life, so that
 * one process per contender made the ratio between two contenders a draw
 * (docs/reference/benchmarks.md "One process per round"). Not for borrowed servers.
 */
export async function interleaved(contenders, { rounds = ROUNDS, duration = ROUND_SEC, freshProcesses = false } = {}) {
  if (freshProcesses) return interleavedFresh(contenders, rounds, duration);
  const running = [];
  try {
    for (const contender of contenders) {
      const server = await contender.start();
      running.push({ name: contender.name, server, client: contender.client, rounds: [] });
      running.at(-1).options = await contender.options(server);
    }
    for (const entry of running) await warmUp(entry);
    for (let round = 0; round < rounds; round += 1) {
      // Each round starts with the next contender, so that none is always first or last.
      for (let turn = 0; turn < running.length; turn += 1) {
        const entry = running[(round + turn) % running.length];
        entry.rounds.push(await measuredRound(entry, duration));
      }
    }
    return running.map(({ name, rounds: measured }) => summarizeRounds(name, measured));
  } finally {
    for (const entry of running) await entry.server.stop();
  }
}

async function interleavedFresh(contenders, rounds, duration) {
  const measured = contenders.map(() => []);
  for (let round = 0; round < rounds; round += 1) {
    for (let turn = 0; turn < contenders.length; turn += 1) {
      const index = (round + turn) % contenders.length;
      const contender = contenders[index];
      const server = await contender.start();
      try {
        const entry = { name: contender.name, server, client: contender.client };
        entry.options = await contender.options(server);
        await warmUp(entry);
        measured[index].push(await measuredRound(entry, duration));
      } finally {
        await server.stop();
      }
    }
  }
  return contenders.map((contender, index) => summarizeRounds(contender.name, measured[index]));
}

/** Load before the first measured round: JIT, caches and connection pools settle first. */
async function warmUp(entry) {
  if (entry.client === "undici") await undiciLoad({ ...entry.options, duration: WARMUP_SEC });
  else await load({ ...entry.options, duration: WARMUP_SEC });
}

/** A contender's row: its median round, and each round's CPU per answer for pairedRatio(). */
function summarizeRounds(name, measured) {
  for (const row of measured) if (Number.isFinite(row.otherPct)) worstOtherPct = Math.max(worstOtherPct, row.otherPct);
  const middle = [...measured].sort((a, b) => a.reqPerSec - b.reqPerSec)[Math.floor(measured.length / 2)];
  const statuses = new Set(measured.flatMap((row) => Object.keys(row.p99ByStatus)));
  const p99ByStatus = Object.fromEntries([...statuses].map((status) => [status, median(measured.map((row) => row.p99ByStatus[status]))]));
  return {
    name,
    reqPerSec: middle.reqPerSec,
    p50Ms: middle.p50Ms,
    p99Ms: middle.p99Ms,
    cpuUsPerReq: median(measured.map((row) => row.cpuUsPerReq)),
    "srvCpu%": Math.round(median(measured.map((row) => row.srvCpuPct))),
    "genCpu%": Math.round(median(measured.map((row) => row.genCpuPct))),
    ...(pinning().enabled ? { "other%": Math.round(Math.max(...measured.map((row) => row.otherPct))) } : {}),
    statuses: middle.statuses,
    ...(middle.connsPerReq >= 0 ? { "new conns/req": middle.connsPerReq.toFixed(2) } : {}),
    errors: middle.errors,
    "rounds (req/s)": measured.map((row) => row.reqPerSec).join(" "),
    p99ByStatus,
    // Each round's CPU per answer, in round order: pairedRatio() sets them side by side.
    cpuRounds: measured.map((row) => row.cpuUsPerReq),
  };
}

// ---------------------------------------------------------------------------------------
// Output

const cell = (value) => (typeof value === "number" ? (Number.isInteger(value) ? String(value) : value.toFixed(1)) : String(value ?? ""));

/** A markdown table; object-valued fields (p99ByStatus) are left out. */
export function printTable(title, rows) {
  console.log(`\n## ${title}\n`);
  const keys = Object.keys(rows[0]).filter((key) => rows.every((row) => typeof row[key] !== "object" || row[key] === null));
  console.log(`| ${keys.join(" | ")} |`);
  console.log(`| ${keys.map(() => "---").join(" | ")} |`);
  for (const row of rows) console.log(`| ${keys.map((key) => cell(row[key])).join(" | ")} |`);
  if (keys.includes("srvCpu%")) {
    console.log(
      "\ncpuUsPerReq: the server's CPU µs per answer (process tree, median round). srvCpu%: its CPU time over the round's wall time" +
        " (100 = its core fully used); genCpu%: the load generator's (this process)." +
        (keys.includes("other%") ? " other%: the worst round's share of the server core taken by other processes and interrupt work; above a few %, the machine was not quiet." : ""),
    );
    const idle = rows.filter((row) => row["srvCpu%"] < 85).map((row) => row.name);
    if (idle.length > 0) {
      console.log(`note: under 85 srvCpu% (${idle.join("; ")}): the server waited for work, so its CPU per answer carries more event-loop overhead than at saturation.`);
    }
  }
}

/**
 * `a`'s CPU per answer over `b`'s, taken round by round and then the median of those
 * ratios. Both ran in the same interleaved round, seconds apart: on a virtual machine whose
 * speed drifts by tens of percent from one round to the next (docs/reference/benchmarks.md
 * "How to read these figures"), the pair moves together and their ratio does not, while
 * the ratio of two medians can take each median from a different round.
 */
export function pairedRatio(a, b) {
  return median(a.cpuRounds.map((cpu, round) => cpu / b.cpuRounds[round]));
}

export const ratio = (a, b) => (!Number.isFinite(a) || !Number.isFinite(b) || b === 0 ? "n/a" : (a / b).toFixed(2));

/**
 * A row of the final summary: `measure` with its `value` (a number, shown with `digits`)
 * against `{ max }` or `{ min }` (met or not) or no bound (reported only).
 */
export function target(section, measure, value, bound = {}, { digits = 2, unit = "" } = {}) {
  const shown = Number.isFinite(value) ? `${value.toFixed(digits)}${unit}` : "n/a";
  let goal = "(reported)";
  let met = "";
  if (bound.max !== undefined) {
    goal = `≤ ${bound.max}${unit}`;
    met = Number.isFinite(value) ? (value <= bound.max ? "yes" : "NO") : "?";
  } else if (bound.min !== undefined) {
    goal = `≥ ${bound.min}${unit}`;
    met = Number.isFinite(value) ? (value >= bound.min ? "yes" : "NO") : "?";
  }
  return { section, measure, measured: shown, target: goal, met };
}

/** Prints the pinning decision once per run, at the top. */
export function printPinning() {
  console.log(pinning().note);
}
