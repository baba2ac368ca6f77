/**
 * The events of one `$stream` call between the pump, which reads the network as fast as
 * it comes, and the caller's `for await`, which may read late or never. Unbounded on
 * purpose: the pump must reach the terminal record for `result` to settle whether or not
 * anyone reads the events. A reader who left the loop early will never read again, so
 * from then on events are dropped rather than held until the call ends.
 */
export class EventQueue<T> {
  #items: T[] = [];
  #head = 0;
  #end: { failed: false } | { failed: true; error: unknown } | undefined;
  #wake: (() => void) | undefined;
  #detached = false;

  /** The events pushed and not yet read. */
  get size(): number {
    return this.#items.length - this.#head;
  }

  push(item: T): void {
    if (this.#end !== undefined || this.#detached) return;
    this.#items.push(item);
    this.#wakeReader();
  }

  /** After the buffered events, the reader's loop ends normally. */
  close(): void {
    this.#end ??= { failed: false };
    this.#wakeReader();
  }

  /** After the buffered events, the reader's loop throws `error`. */
  fail(error: unknown): void {
    this.#end ??= { failed: true, error };
    this.#wakeReader();
  }

  /** The events in order; one generator, so one consumer. */
  async *drain(): AsyncGenerator<T, void, undefined> {
    try {
      for (;;) {
        if (this.#head < this.#items.length) {
          const item = this.#items[this.#head] as T;
          this.#items[this.#head] = undefined as T;
          this.#head += 1;
          if (this.#head === this.#items.length) {
            this.#items = [];
            this.#head = 0;
          }
          yield item;
          continue;
        }
        if (this.#end !== undefined) {
          if (this.#end.failed) throw this.#end.error;
          return;
        }
        await new Promise<void>((resolve) => {
          this.#wake = resolve;
        });
      }
    } finally {
      // Also reached at the normal end, after which nothing is pushed anyway.
      this.#detached = true;
      this.#items = [];
      this.#head = 0;
    }
  }

  #wakeReader(): void {
    const wake = this.#wake;
    this.#wake = undefined;
    wake?.();
  }
}
