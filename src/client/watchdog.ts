/**
 * The stall timer of a `$stream` call once its headers are in: armed then and again at
 * every sign of life, it fires when the server has said nothing for `ms`. A stream has no
 * overall deadline (it may rightly run for minutes), so silence is what tells a dead one
 * apart. Before the headers the transport's per-attempt timeout plays this part, since a
 * timer here could not tell the transport's own waits (retries, a refresh) from silence.
 */
export class Watchdog {
  readonly #ms: number;
  readonly #onStall: () => void;
  #timer: ReturnType<typeof setTimeout> | undefined;

  /** `ms` 0 (or Infinity) never fires. */
  constructor(ms: number, onStall: () => void) {
    this.#ms = ms;
    this.#onStall = onStall;
  }

  arm(): void {
    this.stop();
    if (this.#ms > 0 && Number.isFinite(this.#ms)) this.#timer = setTimeout(this.#onStall, this.#ms);
  }

  stop(): void {
    if (this.#timer !== undefined) clearTimeout(this.#timer);
    this.#timer = undefined;
  }
}
