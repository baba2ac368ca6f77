// Streaming answers (docs/guides/streaming.md), servers pinned to the server core, the
// reader in this process on the load core (lib.mjs):
//   a. events per second through one stream, and the server's CPU µs per event, for a raw
//      node:http handler writing the same NDJSON (bench/servers/raw-stream.mjs), the gateway
//      with an inline method, and the gateway with an isolated one (each event relayed from
//      a worker thread); BENCH_STREAM_EVENTS (200 000) token-sized events per stream, the
//      median of ROUNDS interleaved streams each;
//   b. memory with a reader that stops: a method emitting 16 KiB events as fast as it may
//      to a reader that reads nothing for BENCH_STALL_SEC (3 s): the server's RSS growth
//      and how many events it managed to write.
// Targets: (a) the gateway's CPU per event ≤ 2× the raw handler's; (b) RSS growth ≤ 32 MB.
import { request as httpRequest } from "node:http";
import { Pool } from "undici";
import { REPO, ROUNDS, cpuMicros, memoryMb, printTable, ratio, target, viewerSession } from "./lib.mjs";
import { startGateway } from "./rpc.mjs";
import { startProcess } from "./lib.mjs";
import { join } from "node:path";

const EVENTS = Number(process.env.BENCH_STREAM_EVENTS ?? 200_000);
const STALL_SEC = Number(process.env.BENCH_STALL_SEC ?? 3);
const sleep = (ms) => new Promise((resolve) => setTimeout(resolve, ms));

/** Reads one whole stream as fast as this process can; returns its events, wall time and the server's CPU time. */
async function oneStream(server, path, session, events) {
  const origin = new URL(server.url).origin;
  const pool = new Pool(origin, { connections: 1 });
  const cpuBefore = cpuMicros(server.child.pid);
  const started = performance.now();
  const { statusCode, body } = await pool.request({
    path,
    method: "POST",
    headers: { "content-type": "application/json", "x-app-rpc-stream": "1", cookie: session.cookie, "x-app-csrf": session.csrf },
    body: JSON.stringify({ args: [events] }),
  });
  let lines = 0;
  let tail = "";
  for await (const chunk of body) {
    for (let at = chunk.indexOf(10); at !== -1; at = chunk.indexOf(10, at + 1)) lines += 1;
    tail = chunk.length > 200 ? chunk.subarray(chunk.length - 200).toString("utf8") : (tail + chunk.toString("utf8")).slice(-200);
  }
  const wallMs = performance.now() - started;
  const cpuUs = cpuMicros(server.child.pid) - cpuBefore;
  await pool.close();
  if (statusCode !== 200 || !tail.includes('"done":true,"ok":true')) throw new Error(`${path}: status ${statusCode}, ended with ${tail}`);
  // The terminal record is not an event; pings do not come at this rate.
  const received = lines - 1;
  return { eventsPerSec: (received / wallMs) * 1000, cpuUsPerEvent: cpuUs / received, wallMs };
}

const median = (values) => [...values].sort((a, b) => a - b)[Math.floor(values.length / 2)];

async function throughput() {
  const raw = await startProcess(join(REPO, "bench/servers/raw-stream.mjs"), []);
  const gateway = await startGateway();
  const contenders = [
    { name: "raw node:http NDJSON", server: raw, path: "/stream" },
    { name: "gateway, inline method", server: gateway, path: "/__rpc/plugin/bench/tokens" },
    { name: "gateway, isolated method", server: gateway, path: "/__rpc/plugin/bench/tokensIsolated" },
  ];
  try {
    for (const contender of contenders) {
      contender.session = await viewerSession(contender.server.url);
      await oneStream(contender.server, contender.path, contender.session, Math.ceil(EVENTS / 4));
      contender.rounds = [];
    }
    for (let round = 0; round < ROUNDS; round += 1) {
      for (let turn = 0; turn < contenders.length; turn += 1) {
        const contender = contenders[(round + turn) % contenders.length];
        contender.rounds.push(await oneStream(contender.server, contender.path, contender.session, EVENTS));
      }
    }
  } finally {
    await raw.stop();
    await gateway.stop();
  }
  return contenders.map(({ name, rounds }) => ({
    name,
    "events/s": Math.round(median(rounds.map((row) => row.eventsPerSec))),
    cpuUsPerEvent: median(rounds.map((row) => row.cpuUsPerEvent)),
    "rounds (events/s)": rounds.map((row) => Math.round(row.eventsPerSec)).join(" "),
  }));
}

/** A stream whose reader reads nothing for STALL_SEC: how much the server's memory grows meanwhile. */
async function stoppedReader() {
  const gateway = await startGateway();
  try {
    const pid = gateway.child.pid;
    const session = await viewerSession(gateway.url);
    const target = new URL(gateway.url);
    const beforeMb = memoryMb(pid, "VmRSS");
    let peakMb = beforeMb;
    const request = httpRequest({
      host: target.hostname,
      port: target.port,
      path: "/__rpc/plugin/bench/large",
      method: "POST",
      headers: { "content-type": "application/json", "x-app-rpc-stream": "1", cookie: session.cookie, "x-app-csrf": session.csrf },
    });
    const response = new Promise((resolve) => request.on("response", resolve));
    request.on("error", () => {});
    request.end(JSON.stringify({ args: [{ n: 100_000, size: 16_384 }] }));
    (await response).pause();
    for (let waited = 0; waited < STALL_SEC * 1000; waited += 250) {
      await sleep(250);
      peakMb = Math.max(peakMb, memoryMb(pid, "VmRSS"));
    }
    const answer = await fetch(`${gateway.url}/__rpc/plugin/bench/emittedSoFar`, {
      method: "POST",
      headers: { "content-type": "application/json", cookie: session.cookie, "x-app-csrf": session.csrf },
      body: '{"args":[]}',
    });
    const emitted = (await answer.json()).result;
    request.destroy();
    return { beforeMb, peakMb, growthMb: peakMb - beforeMb, emitted };
  } finally {
    await gateway.stop();
  }
}

export async function benchStream() {
  const rows = await throughput();
  const [raw, inline, isolated] = rows;
  printTable(`Streaming: ${EVENTS} token-sized events through one stream, median of ${ROUNDS} interleaved streams`, rows);
  console.log(`\ngateway inline / raw, CPU per event: ${ratio(inline.cpuUsPerEvent, raw.cpuUsPerEvent)} (target <= 2); isolated / raw: ${ratio(isolated.cpuUsPerEvent, raw.cpuUsPerEvent)}`);
  const stalled = await stoppedReader();
  printTable(`Streaming: a reader that stops for ${STALL_SEC} s while the method emits 16 KiB events (100 000 asked, 1.6 GB)`, [
    { "RSS before (MB)": stalled.beforeMb, "RSS peak (MB)": stalled.peakMb, "growth (MB)": stalled.growthMb, "events written": stalled.emitted },
  ]);
  return {
    targets: [
      target("stream", "gateway inline / raw node:http, CPU µs per event", inline.cpuUsPerEvent / raw.cpuUsPerEvent, { max: 2 }),
      target("stream", "gateway inline, events/s through one stream", inline["events/s"], {}, { digits: 0 }),
      target("stream", "gateway inline CPU µs per event", inline.cpuUsPerEvent, {}, { digits: 2 }),
      target("stream", "gateway isolated CPU µs per event", isolated.cpuUsPerEvent, {}, { digits: 2 }),
      target("stream", "raw node:http CPU µs per event", raw.cpuUsPerEvent, {}, { digits: 2 }),
      target("stream", "RSS growth with a stopped reader", stalled.growthMb, { max: 32 }, { digits: 1, unit: " MB" }),
    ],
  };
}

if (import.meta.url === `file://${process.argv[1]}`) await benchStream();
