// Issue 2 benchmark: the RPC echo through the gateway against a raw node:http handler
// doing the same session, CSRF and JSON work, in the same run.
import { join } from "node:path";
import { REPO, load, printTable, ratio, startProcess, summary, viewerSession } from "./lib.mjs";

const BODY = JSON.stringify({ args: [{ message: "hello, gateway", n: 42, ok: true }] }); // ~60 bytes

async function measure(name, server, path) {
  try {
    const { cookie, csrf } = await viewerSession(server.url);
    const headers = { cookie, "x-app-csrf": csrf, "content-type": "application/json" };
    await load({ url: server.url + path, method: "POST", headers, body: BODY, duration: 2 }); // warm-up
    return { name, ...summary(await load({ url: server.url + path, method: "POST", headers, body: BODY })) };
  } finally {
    await server.stop();
  }
}

export async function benchRpc() {
  const raw = await measure("raw node:http", await startProcess(join(REPO, "bench/servers/raw-rpc.mjs"), []), "/rpc");
  const gateway = await measure(
    "gateway",
    await startProcess(join(REPO, "index.js"), ["--port", "$PORT", "--root", join(REPO, "bench/app")]),
    "/__rpc/plugin/bench/echo",
  );
  // The same gateway without its per-call log line (the raw handler writes none): how much
  // of the difference is the structured log the spec asks for.
  const quiet = await measure(
    "gateway, per-call log off",
    await startProcess(join(REPO, "index.js"), ["--port", "$PORT", "--root", join(REPO, "bench/app")], { APP_LOG_LEVEL: "warn" }),
    "/__rpc/plugin/bench/echo",
  );
  printTable(`RPC echo, ${BODY.length}-byte body, 50 connections`, [raw, gateway, quiet]);
  console.log(`\ngateway / raw req/s: ${ratio(gateway.reqPerSec, raw.reqPerSec)} (target >= 0.75)`);
  console.log(`gateway without the per-call log / raw req/s: ${ratio(quiet.reqPerSec, raw.reqPerSec)}`);
  return { raw, gateway, quiet };
}

if (import.meta.url === `file://${process.argv[1]}`) await benchRpc();
