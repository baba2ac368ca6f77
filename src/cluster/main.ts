/**
 * `node cluster-index.js`: the cluster part. One master (master.ts) and `APP_WORKERS`
 * workers (worker.ts) sharing one port through `node:cluster`; they talk over the IPC
 * channel (ipc.ts). May import the server side (create-server, cli options, log); the
 * server side imports only the types in hooks.ts and the shutdown helper from here.
 */
import cluster from "node:cluster";
import { runMaster } from "./master.js";
import { runWorker } from "./worker.js";

export async function main(argv = process.argv.slice(2), env = process.env): Promise<void> {
  if (cluster.isPrimary) await runMaster(argv, env);
  else await runWorker(argv, env);
}
