/**
 * Runs a dev-mode rescan for a caller that needs one, without letting a flood of calls to a
 * misspelt method rescan the disk for each. A caller always gets a scan that started after
 * it asked (one that was already running may have read the folder before the file it wants
 * was written), so an answer is never stale; callers that ask while a scan runs share the
 * next one; and scans start at least `minIntervalMs` apart. A flood then costs one scan
 * per interval, and a caller waits at most a scan and an interval.
 */
export class RescanGate {
  readonly #minIntervalMs: number;
  /** The scan callers asking now will share: it starts once the running one ended. */
  #next: Promise<void> | undefined;
  #running: Promise<void> | undefined;
  #lastStart = -Infinity;

  constructor(minIntervalMs: number) {
    this.#minIntervalMs = minIntervalMs;
  }

  run(scan: () => Promise<void>): Promise<void> {
    this.#next ??= this.#start(scan);
    return this.#next;
  }

  async #start(scan: () => Promise<void>): Promise<void> {
    await this.#running?.catch(() => {});
    const wait = this.#lastStart + this.#minIntervalMs - Date.now();
    if (wait > 0) await new Promise((resolve) => setTimeout(resolve, wait));
    // From here on, a new caller may have written its file after this scan read the disk.
    this.#next = undefined;
    this.#lastStart = Date.now();
    const running = scan();
    this.#running = running;
    try {
      await running;
    } finally {
      if (this.#running === running) this.#running = undefined;
    }
  }
}
