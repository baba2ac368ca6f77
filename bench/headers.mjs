// What the headers every answer carries and CORS cost an RPC call: the echo of the rpc
// section on gateways that differ only in their config, loaded in interleaved rounds:
//   - `server.headers` with nosniff and Referrer-Policy off (only X-Request-Id added to each head),
//   - the defaults (both added to each head too, src/http/answer-headers.ts),
//   - `server.allowedOrigins` listed, called from the page's own origin (Vary only) and
//     from the listed origin (the CORS answer headers).
// Target: the defaults cost at most 5 % more CPU per call than the headers off.
import { mkdtempSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { REPO, ROUNDS, ROUND_SEC, interleaved, pairedRatio, printTable, ratio, startProcess, target } from "./lib.mjs";
import { BODY, rpcOptions } from "./rpc.mjs";

const LISTED = "https://viewer.example";

export async function benchHeaders() {
  const dir = mkdtempSync(join(tmpdir(), "counterpart-bench-headers-"));
  try {
    const configs = {
      off: { server: { headers: { noSniff: false, referrerPolicy: false } } },
      defaults: {},
      cors: { server: { allowedOrigins: [LISTED] } },
    };
    const start = (name) => {
      const file = join(dir, `${name}.json`);
      writeFileSync(file, JSON.stringify(configs[name]));
      return () => startProcess(join(REPO, "index.js"), ["--port", "$PORT", "--root", join(REPO, "bench/app"), "--config", file]);
    };
    const echo = (name, config, origin) => ({
      name,
      start: start(config),
      async options(server) {
        const options = await rpcOptions(server, "/__rpc/plugin/bench/echo");
        if (origin) options.headers.origin = origin;
        return options;
      },
    });
    const rows = await interleaved([
      echo("headers off", "off"),
      echo("defaults (nosniff, Referrer-Policy)", "defaults"),
      echo("allowedOrigins listed, same-origin call", "cors"),
      echo("allowedOrigins listed, call from the listed origin", "cors", LISTED),
    ]);
    printTable(`RPC echo (${BODY.length}-byte body), 50 connections, median of ${ROUNDS} interleaved ${ROUND_SEC}-second rounds`, rows);
    const [off, defaults, sameOrigin, crossOrigin] = rows;
    console.log(`\ndefaults / headers off, CPU per call: ${pairedRatio(defaults, off).toFixed(2)} paired by round (target <= 1.05); of the medians: ${ratio(defaults.cpuUsPerReq, off.cpuUsPerReq)}`);
    console.log(`CORS, same-origin call / defaults: ${ratio(sameOrigin.cpuUsPerReq, defaults.cpuUsPerReq)}; call from the listed origin / defaults: ${ratio(crossOrigin.cpuUsPerReq, defaults.cpuUsPerReq)}`);
    return {
      rows,
      targets: [
        target("headers", "defaults / headers off, CPU µs per call (paired by round)", pairedRatio(defaults, off), { max: 1.05 }),
        target("headers", "CORS listed, same-origin call / defaults, CPU", sameOrigin.cpuUsPerReq / defaults.cpuUsPerReq),
        target("headers", "CORS call from the listed origin / defaults, CPU", crossOrigin.cpuUsPerReq / defaults.cpuUsPerReq),
      ],
    };
  } finally {
    rmSync(dir, { recursive: true, force: true });
  }
}

if (import.meta.url === `file://${process.argv[1]}`) await benchHeaders();
