// Issue 2 benchmark: the RPC echo through the gateway against a raw node:http handler
// doing the same session, CSRF and JSON work, in the same run, in interleaved rounds.
import { join } from "node:path";
import { REPO, ROUNDS, ROUND_SEC, interleaved, printTable, ratio, startProcess, viewerSession } from "./lib.mjs";

const BODY = JSON.stringify({ args: [{ message: "hello, gateway", n: 42, ok: true }] }); // ~60 bytes

function contender(name, start, path) {
  return {
    name,
    start,
    async options(server) {
      const { cookie, csrf } = await viewerSession(server.url);
      const headers = { cookie, "x-app-csrf": csrf, "content-type": "application/json" };
      return { url: server.url + path, method: "POST", headers, body: BODY };
    },
  };
}

const gateway = (env = {}) => () => startProcess(join(REPO, "index.js"), ["--port", "$PORT", "--root", join(REPO, "bench/app")], env);

export async function benchRpc() {
  const [raw, full, quiet] = await interleaved([
    contender("raw node:http", () => startProcess(join(REPO, "bench/servers/raw-rpc.mjs"), []), "/rpc"),
    contender("gateway", gateway(), "/__rpc/plugin/bench/echo"),
    // The same gateway without its per-call log line (the raw handler writes none): how
    // much of the difference is the structured log the spec asks for.
    contender("gateway, per-call log off", gateway({ APP_LOG_LEVEL: "warn" }), "/__rpc/plugin/bench/echo"),
  ]);
  printTable(`RPC echo, ${BODY.length}-byte body, 50 connections, median of ${ROUNDS} interleaved ${ROUND_SEC}-second rounds`, [raw, full, quiet]);
  console.log(`\ngateway / raw req/s: ${ratio(full.reqPerSec, raw.reqPerSec)} (target >= 0.75)`);
  console.log(`gateway without the per-call log / raw req/s: ${ratio(quiet.reqPerSec, raw.reqPerSec)}`);
  console.log(`gateway / raw, CPU time per request: ${ratio(full.cpuUsPerReq, raw.cpuUsPerReq)}`);
  return { raw, gateway: full, quiet };
}

if (import.meta.url === `file://${process.argv[1]}`) await benchRpc();
