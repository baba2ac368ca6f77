// Preloaded into a server by the `allocations` section (`node --import <this> …`): the first
// SIGUSR2 starts V8's sampling heap profiler, counting objects the collector has already
// freed too (a call's garbage is what it allocates, and all of it dies young); the second
// stops it and writes the profile to $BENCH_ALLOC_FILE. Over the inspector protocol, in the
// process itself, so that no debugger port is opened.
import { renameSync, writeFileSync } from "node:fs";
import { Session } from "node:inspector";

const file = process.env.BENCH_ALLOC_FILE;
const session = new Session();
session.connect();
let sampling = false;

process.on("SIGUSR2", () => {
  if (!sampling) {
    sampling = true;
    session.post("HeapProfiler.enable", () => {
      session.post("HeapProfiler.startSampling", { samplingInterval: 256, includeObjectsCollectedByMajorGC: true, includeObjectsCollectedByMinorGC: true });
    });
    return;
  }
  sampling = false;
  session.post("HeapProfiler.stopSampling", (error, result) => {
    // Renamed into place, so that the section never reads half a profile.
    writeFileSync(`${file}.part`, JSON.stringify(error ? { error: error.message } : result.profile));
    renameSync(`${file}.part`, file);
  });
});
