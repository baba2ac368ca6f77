// Input validation on the RPC echo (docs/guides/server-methods.md "Validating input and output"): the echo with no
// schema against the same echo whose policy declares a small zod object schema for its
// argument, on one gateway process, interleaved rounds, 50 connections (lib.mjs). Beside
// the difference, zod's own cost for the same parse, measured alone in this process: what a
// validating gateway cannot do without. With BENCH_BEFORE=<an older checkout, built>, that
// checkout's gateway runs the same echo too, so that "unused features cost nothing" is a
// figure: the echo without a schema here against the echo there.
// Reported: CPU µs per call of each; (schema − no schema) against zod's own µs per parse.
import { join } from "node:path";
import { BODY, rpcOptions, startGateway } from "./rpc.mjs";
import { ROUNDS, ROUND_SEC, borrowed, interleaved, pairedRatio, printTable, ratio, startProcess, target } from "./lib.mjs";
import { EchoInput } from "./app/plugins/bench/policies.server.mjs";

const PATH = "/__rpc/plugin/bench/";

/** zod's `~standard.validate` of the benchmark's argument, µs of CPU per call, alone. */
function zodAlone() {
  const value = JSON.parse(BODY).args[0];
  const validate = EchoInput["~standard"].validate;
  for (let i = 0; i < 200_000; i += 1) validate(value); // warm up
  const calls = 1_000_000;
  const before = process.cpuUsage();
  for (let i = 0; i < calls; i += 1) {
    const out = validate(value);
    if (out.issues) throw new Error("the benchmark's argument fails its own schema");
  }
  const used = process.cpuUsage(before);
  return (used.user + used.system) / calls;
}

export async function benchValidation() {
  const gateway = await startGateway();
  const before = process.env.BENCH_BEFORE;
  try {
    const shared = async () => borrowed(gateway);
    const contenders = [
      { name: "echo, no schema", start: shared, options: (server) => rpcOptions(server, PATH + "echo") },
      { name: "echo, zod input schema", start: shared, options: (server) => rpcOptions(server, PATH + "echoZod") },
    ];
    if (before) {
      contenders.push({
        name: `echo, no schema, on ${before}`,
        start: () => startProcess(join(before, "index.js"), ["--port", "$PORT", "--root", join(before, "bench/app")]),
        options: (server) => rpcOptions(server, PATH + "echo"),
      });
    }
    const rows = await interleaved(contenders);
    printTable(`Input validation on the RPC echo, 50 connections, median of ${ROUNDS} interleaved ${ROUND_SEC}-second rounds`, rows);
    const [plain, zod, older] = rows;
    const alone = zodAlone();
    const extra = zod.cpuUsPerReq - plain.cpuUsPerReq;
    console.log("");
    console.log(`zod schema − no schema, CPU µs per call: ${extra.toFixed(1)}; zod's own parse of the same argument, alone: ${alone.toFixed(2)} µs`);
    if (older) console.log(`echo here / echo on ${before}, CPU per call: ${pairedRatio(plain, older).toFixed(2)} paired by round; of the medians: ${ratio(plain.cpuUsPerReq, older.cpuUsPerReq)}`);
    return {
      rows,
      targets: [
        target("validation", "echo, no schema: CPU µs per call", plain.cpuUsPerReq, {}, { digits: 1 }),
        target("validation", "echo with a zod input schema − without, CPU µs per call", extra, {}, { digits: 1 }),
        target("validation", "zod's own parse of the same argument, alone, CPU µs", alone),
        ...(older ? [target("validation", "echo without a schema / the same echo on BENCH_BEFORE, CPU per call (paired by round)", pairedRatio(plain, older))] : []),
      ],
    };
  } finally {
    await gateway.stop();
  }
}
