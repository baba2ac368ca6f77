/**
 * The cluster entrypoint's own setting: `APP_WORKERS`, the number of worker processes
 * (default: the CPUs this process may use). Every other flag and variable is index.js's.
 */
import { availableParallelism } from "node:os";
import { USAGE } from "../cli/options.js";
import { StartupError } from "../errors/http-error.js";

export const CLUSTER_USAGE = `${USAGE.replace("node index.js", "node cluster-index.js")}

  APP_WORKERS    number of worker processes (default: the number of CPUs)`;

export function readWorkerCount(env: NodeJS.ProcessEnv): number {
  const text = env.APP_WORKERS;
  if (text === undefined || text === "") return Math.max(1, availableParallelism());
  const count = Number(text);
  if (!/^\d+$/.test(text.trim()) || !Number.isSafeInteger(count) || count < 1) {
    throw new StartupError("STARTUP_BAD_ARGUMENTS", `APP_WORKERS must be an integer >= 1, got "${text}"`);
  }
  return count;
}
