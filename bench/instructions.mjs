// Instructions per call of the `rpc` section's echo, counted by valgrind's callgrind: the
// form of its gateway / bare Fastify ratio that does not move with the machine. CPU time
// per call on a shared virtual machine moves with what its neighbours do (the same code's
// ratio came out between 1.02 and 1.71 in four runs of one night, docs/reference/benchmarks.md),
// while the instructions a call executes move little. Instructions are not time (a cache
// miss costs more than an add), so this corroborates the CPU figures, it does not replace them.
//
// Each server runs under `valgrind --tool=callgrind`: WARM calls first (the JIT settles),
// then the counters are zeroed (`callgrind_control -z`), CALLS calls are made and the
// counters dumped (`-d`); the main thread's count over CALLS is the figure. The contenders
// are the `rpc` section's raw node:http handler, bare Fastify route (the same checks) and
// gateway, with and without its per-call log line, each in its own process. Refusals are
// left to the `refusals` section: windows taken one after another in one process differ by
// whether a major collection fell in them, by up to a fifth here.
// BENCH_INSN_CACHE=1 adds callgrind's cache simulation (`--cache-sim=yes`, about twice as
// slow): the first-level instruction and data cache misses per call beside the instructions,
// which is where a call that executes few more instructions can still take more time.
// Needs valgrind (Debian's `valgrind`); without it the section says so and is skipped.
import { execFileSync, spawn, spawnSync } from "node:child_process";
import { mkdtempSync, readdirSync, readFileSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { REPO, SESSION_SECRET, freePort, load, pinnedCommand, printTable, target } from "./lib.mjs";
import { rpcOptions } from "./rpc.mjs";

const WARM = Number(process.env.BENCH_INSN_WARM ?? 5000);
const CALLS = Number(process.env.BENCH_INSN_CALLS ?? 10000);
const CONNECTIONS = 20;
const CACHE_SIM = process.env.BENCH_INSN_CACHE === "1";
const PATH = "/__rpc/plugin/bench/";

const sleep = (ms) => new Promise((resolve) => setTimeout(resolve, ms));

/** Starts `node script args` under callgrind, pinned to the server core, and waits for /health. */
async function startCounted(dir, name, script, args, env = {}) {
  const port = await freePort();
  const valgrindArgs = ["--tool=callgrind", "--separate-threads=yes", ...(CACHE_SIM ? ["--cache-sim=yes"] : []), `--callgrind-out-file=${join(dir, `${name}.%p`)}`, process.execPath, script, ...args.map((arg) => arg.replace("$PORT", port))];
  const [command, commandArgs] = pinnedCommand("server", "valgrind", valgrindArgs);
  const child = spawn(command, commandArgs, {
    cwd: REPO,
    env: { ...process.env, APP_SESSION_SECRET: SESSION_SECRET, PORT: String(port), ...env },
    stdio: ["ignore", "ignore", "ignore"],
  });
  const url = `http://127.0.0.1:${port}`;
  const deadline = Date.now() + 300_000; // a start under valgrind takes tens of seconds
  for (;;) {
    try {
      const response = await fetch(url + "/health");
      await response.arrayBuffer();
      break;
    } catch {
      if (Date.now() > deadline || child.exitCode !== null) {
        child.kill("SIGKILL");
        throw new Error(`${script} did not start under valgrind`);
      }
      await sleep(500);
    }
  }
  // taskset execs valgrind, which runs node in its own process: the pid callgrind answers to.
  return { url, pid: child.pid, stop: () => child.kill("SIGKILL") };
}

/** Instructions per request of one kind: WARM unmeasured, then CALLS between a zero and a dump. */
async function countWindow(dir, name, server, options, expectStatus) {
  await load({ ...options, amount: WARM, connections: CONNECTIONS, timeout: 60 });
  await sleep(500);
  execFileSync("callgrind_control", ["-z", String(server.pid)], { stdio: "ignore" });
  const result = await load({ ...options, amount: CALLS, connections: CONNECTIONS, timeout: 60 });
  await sleep(300);
  const before = new Set(readdirSync(dir));
  execFileSync("callgrind_control", ["-d", String(server.pid)], { stdio: "ignore" });
  const answered = result.statusCodeStats?.[expectStatus]?.count ?? 0;
  if (answered !== CALLS) throw new Error(`${name}: ${answered} of ${CALLS} answers were ${expectStatus}: ${JSON.stringify(result.statusCodeStats)}`);
  // Each event callgrind counted (Ir, and with the cache simulation I1mr, D1mr, ...) over CALLS.
  const totals = new Map();
  // The main thread's file only (callgrind's "-01"): V8's compiler and GC helper threads
  // finish work for whichever window they happen to fall in.
  for (const file of readdirSync(dir).filter((file) => !before.has(file) && file.endsWith("-01"))) {
    const text = readFileSync(join(dir, file), "utf8");
    const events = /^events: (.+)$/m.exec(text)?.[1].trim().split(/\s+/) ?? [];
    const counts = /^(?:summary|totals): (.+)$/m.exec(text)?.[1].trim().split(/\s+/).map(Number) ?? [];
    events.forEach((event, index) => totals.set(event, (totals.get(event) ?? 0) + (counts[index] ?? 0)));
  }
  if (!totals.get("Ir")) throw new Error(`${name}: callgrind wrote no counts`);
  const perCall = (event) => (totals.get(event) ?? NaN) / CALLS;
  return { name, instructionsPerCall: perCall("Ir"), i1MissesPerCall: perCall("I1mr"), d1MissesPerCall: perCall("D1mr") + perCall("D1mw") };
}

async function countServer(dir, name, script, args, env, windows) {
  const server = await startCounted(dir, name, script, args, env);
  try {
    const rows = [];
    for (const window of windows) rows.push(await countWindow(dir, window.name, server, await window.options(server), window.status ?? 200));
    return rows;
  } finally {
    server.stop();
  }
}

export async function benchInstructions() {
  if (spawnSync("valgrind", ["--version"]).error) {
    console.log("\n## Instructions per call\n\nskipped: valgrind not found (Debian's `valgrind` package)");
    return { targets: [] };
  }
  const dir = mkdtempSync(join(tmpdir(), "counterpart-bench-callgrind-"));
  try {
    const servers = join(REPO, "bench/servers");
    const gatewayArgs = ["--port", "$PORT", "--root", join(REPO, "bench/app")];
    const echo = (name, path) => ({ name, options: (server) => rpcOptions(server, path) });
    const [raw] = await countServer(dir, "raw", join(servers, "raw-rpc.mjs"), [], {}, [echo("raw node:http", "/rpc")]);
    const [fastify] = await countServer(dir, "fastify", join(servers, "fastify-rpc.mjs"), [], {}, [echo("bare Fastify route", "/rpc")]);
    const [quiet] = await countServer(dir, "quiet", join(REPO, "index.js"), gatewayArgs, { APP_LOG_LEVEL: "warn" }, [echo("gateway, per-call log off", PATH + "echo")]);
    const [gateway] = await countServer(dir, "gateway", join(REPO, "index.js"), gatewayArgs, {}, [echo("gateway", PATH + "echo")]);
    const rows = [raw, fastify, gateway, quiet];
    printTable(
      `Instructions per call (callgrind, main thread, Node ${process.versions.node}): ${CALLS} calls after ${WARM} unmeasured, ${CONNECTIONS} connections`,
      rows.map((row) => ({
        request: row.name,
        "instructions per call": Math.round(row.instructionsPerCall).toLocaleString("en"),
        ...(CACHE_SIM
          ? { "L1 instruction misses per call": Math.round(row.i1MissesPerCall).toLocaleString("en"), "L1 data misses per call": Math.round(row.d1MissesPerCall).toLocaleString("en") }
          : {}),
      })),
    );
    const per = (row, base, count = "instructionsPerCall") => row[count] / base[count];
    console.log(`\ngateway / bare Fastify, instructions per call: ${per(gateway, fastify).toFixed(3)}; without the per-call log: ${per(quiet, fastify).toFixed(3)}; gateway / raw: ${per(gateway, raw).toFixed(3)}`);
    if (CACHE_SIM) {
      const misses = (row) => `instruction ${per(row, fastify, "i1MissesPerCall").toFixed(3)}, data ${per(row, fastify, "d1MissesPerCall").toFixed(3)}`;
      console.log(`gateway / bare Fastify, simulated L1 misses per call: ${misses(gateway)}; without the per-call log: ${misses(quiet)}`);
    }
    return {
      targets: [
        target("instructions", "gateway / bare Fastify, instructions per call", per(gateway, fastify), { max: 1.33 }, { digits: 3 }),
        target("instructions", "gateway without the per-call log / bare Fastify, instructions per call", per(quiet, fastify), {}, { digits: 3 }),
        target("instructions", "gateway / raw node:http, instructions per call", per(gateway, raw), {}, { digits: 3 }),
        ...(CACHE_SIM
          ? [
              target("instructions", "gateway / bare Fastify, simulated L1 instruction misses per call", per(gateway, fastify, "i1MissesPerCall"), {}, { digits: 3 }),
              target("instructions", "gateway / bare Fastify, simulated L1 data misses per call", per(gateway, fastify, "d1MissesPerCall"), {}, { digits: 3 }),
            ]
          : []),
      ],
    };
  } finally {
    rmSync(dir, { recursive: true, force: true });
  }
}
