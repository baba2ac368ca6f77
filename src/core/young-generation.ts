/**
 * Keeps V8's young generation at its initial size, 1 MB per semi-space, instead of letting
 * it grow to 16 MB per semi-space under allocation. Fully grown, the semi-spaces keep
 * 10–15 MB more resident, in an idle server too. It also bounds the read buffers of a
 * proxied download that wait for a collection: each is freed by the first scavenge after
 * its bytes are forwarded, and a small young generation is scavenged sooner. Measured on
 * the RPC echo benchmark, the CPU time per call did not change beyond the noise.
 *
 * `--max-semi-space-size=1` would be the direct setting, but V8 reads it only when a heap is
 * set up, before any JavaScript runs, and index.js must not start a second process to pass
 * it. The growth factor is read each time the young generation would grow; a factor of 1
 * keeps it where it is. V8 puts the factor back to 2 whenever it sets up another heap (a
 * worker thread, the module loader thread), so it is set again after each of ours starts.
 * A worker started by a method's own code puts it back too, and the young generation may
 * grow again from then on.
 *
 * index.js and cluster-index.js call limitYoungGeneration() before anything else loads. An
 * operator who passes `--max-semi-space-size` or `--semi-space-growth-factor` (on the node
 * command line, or `--max-semi-space-size` in NODE_OPTIONS) keeps their setting.
 */
import { setFlagsFromString } from "node:v8";

const OWN_SETTING = /^--(?:max[-_]semi[-_]space[-_]size|semi[-_]space[-_]growth[-_]factor)\b/;

let limited = false;

/** Applies the limit unless the operator set the young generation's size themselves. */
export function limitYoungGeneration(): void {
  const given = [...process.execArgv, ...(process.env.NODE_OPTIONS ?? "").split(/\s+/)];
  if (given.some((flag) => OWN_SETTING.test(flag))) return;
  limited = true;
  setFlagsFromString("--semi-space-growth-factor=1");
}

/** True when this process limits its young generation (passed on to isolation workers). */
export function youngGenerationLimited(): boolean {
  return limited;
}

/** Sets the limit again after another heap was set up; `force` from a worker thread, told by its data. */
export function reapplyYoungGenerationLimit(force = false): void {
  if (force) limited = true;
  if (limited) setFlagsFromString("--semi-space-growth-factor=1");
}
