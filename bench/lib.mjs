// Shared benchmark plumbing: start a server process on a free port, wait until it answers,
// load it with autocannon from this process, and format figures.
import { spawn } from "node:child_process";
import { readFileSync } from "node:fs";
import { createServer } from "node:net";
import { fileURLToPath } from "node:url";
import { dirname, join } from "node:path";
import autocannon from "autocannon";

export const REPO = join(dirname(fileURLToPath(import.meta.url)), "..");
export const SESSION_SECRET = "bench-session-secret-with-at-least-32-bytes";
export const DURATION_SEC = Number(process.env.BENCH_DURATION_SEC ?? 8);
/** Interleaved measurements: how many rounds per contender, and how long each round lasts. */
export const ROUNDS = Number(process.env.BENCH_ROUNDS ?? 5);
export const ROUND_SEC = Number(process.env.BENCH_ROUND_SEC ?? 3);

export async function freePort() {
  const server = createServer();
  await new Promise((resolve) => server.listen(0, "127.0.0.1", resolve));
  const { port } = server.address();
  await new Promise((resolve) => server.close(resolve));
  return port;
}

/** Spawns `node <script> ...args`, with stdout discarded, and waits for `readyPath` to answer. */
export async function startProcess(script, args, env = {}, readyPath = "/health") {
  const port = await freePort();
  const child = spawn(process.execPath, [script, ...args.map((arg) => String(arg).replace("$PORT", port))], {
    cwd: REPO,
    env: { ...process.env, APP_SESSION_SECRET: SESSION_SECRET, PORT: String(port), ...env },
    stdio: ["ignore", "ignore", "inherit"],
  });
  const url = `http://127.0.0.1:${port}`;
  const deadline = Date.now() + 20_000;
  for (;;) {
    try {
      const response = await fetch(url + readyPath);
      await response.arrayBuffer();
      break;
    } catch {
      if (Date.now() > deadline || child.exitCode !== null) throw new Error(`${script} did not start`);
      await new Promise((resolve) => setTimeout(resolve, 100));
    }
  }
  return {
    url,
    child,
    async stop() {
      if (child.exitCode !== null) return;
      child.kill("SIGTERM");
      await new Promise((resolve) => child.once("exit", resolve));
    },
  };
}

/** A viewer session on a running server: cookie and CSRF token from its page. */
export async function viewerSession(url) {
  const response = await fetch(url + "/");
  const cookie = response.headers.get("set-cookie").split(";")[0];
  const csrf = /APP_CSRF_TOKEN = "([^"]+)"/.exec(await response.text())[1];
  return { cookie, csrf };
}

export function load(options) {
  return new Promise((resolve, reject) => {
    autocannon({ duration: DURATION_SEC, connections: 50, ...options }, (error, result) => (error ? reject(error) : resolve(result)));
  });
}

export function summary(result) {
  return {
    reqPerSec: Math.round(result.requests.average),
    p50Ms: result.latency.p50,
    p99Ms: result.latency.p99,
    non2xx: result.non2xx,
    errors: result.errors + result.timeouts,
  };
}

/** Clock ticks per second of /proc/<pid>/stat's CPU times (USER_HZ, 100 on Linux). */
const CLOCK_TICKS_PER_SEC = 100;

/** CPU time (user + system) the process has used so far, in microseconds; NaN when unknown. */
export function cpuMicros(pid) {
  try {
    // The command name may hold spaces and ")", so fields are counted from after its last ")".
    const line = readFileSync(`/proc/${pid}/stat`, "utf8");
    const fields = line.slice(line.lastIndexOf(")") + 2).split(" ");
    return ((Number(fields[11]) + Number(fields[12])) * 1e6) / CLOCK_TICKS_PER_SEC;
  } catch {
    return NaN;
  }
}

/** One load round, with the server process's CPU time per answered request. */
async function measuredRound(entry, duration) {
  const pid = entry.server.child?.pid;
  const cpuBefore = cpuMicros(pid);
  const result = await load({ ...entry.options, duration });
  const requests = result.requests.total;
  return { ...summary(result), cpuUsPerReq: requests > 0 ? (cpuMicros(pid) - cpuBefore) / requests : NaN };
}

/**
 * Loads each contender in turn, `rounds` short rounds each, with every server up at once,
 * and keeps each one's median round. On a small shared machine a burst of other work then
 * weighs on every contender alike instead of on whichever happened to run during it; the
 * rounds' req/s are printed too, so the spread is visible. `cpuUsPerReq` is the median of the
 * rounds' CPU time of the server process per request: what one request costs the server,
 * less tied to how the cores were shared with the load generator than req/s is (on a busy
 * shared host it still moves by 10 % or so between runs of the same code).
 * A contender is `{ name, start() -> server, options(server) -> autocannon options }`.
 */
export async function interleaved(contenders, { rounds = ROUNDS, duration = ROUND_SEC } = {}) {
  const running = [];
  try {
    for (const contender of contenders) {
      const server = await contender.start();
      running.push({ name: contender.name, server, options: await contender.options(server), rounds: [] });
    }
    for (const entry of running) await load({ ...entry.options, duration: 2 }); // warm-up
    for (let round = 0; round < rounds; round += 1) {
      // Each round starts with the next contender, so that none is always first or last.
      for (let turn = 0; turn < running.length; turn += 1) {
        const entry = running[(round + turn) % running.length];
        entry.rounds.push(await measuredRound(entry, duration));
      }
    }
    return running.map(({ name, rounds: measured }) => {
      const middle = Math.floor(measured.length / 2);
      const median = [...measured].sort((a, b) => a.reqPerSec - b.reqPerSec)[middle];
      const cpuRounds = measured.map((row) => row.cpuUsPerReq).filter(Number.isFinite).sort((a, b) => a - b);
      const cpu = cpuRounds[Math.floor(cpuRounds.length / 2)];
      return {
        name,
        ...median,
        cpuUsPerReq: cpu === undefined ? "n/a" : Math.round(cpu),
        "rounds (req/s)": measured.map((row) => row.reqPerSec).join(" "),
      };
    });
  } finally {
    for (const entry of running) await entry.server.stop();
  }
}

export function printTable(title, rows) {
  console.log(`\n## ${title}\n`);
  const keys = Object.keys(rows[0]);
  console.log(`| ${keys.join(" | ")} |`);
  console.log(`| ${keys.map(() => "---").join(" | ")} |`);
  for (const row of rows) console.log(`| ${keys.map((key) => row[key]).join(" | ")} |`);
}

export const ratio = (a, b) => (b === 0 ? "n/a" : (a / b).toFixed(2));
