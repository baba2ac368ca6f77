/**
 * The events of one `$stream` call between the pump, which reads the network as fast as
 * it comes, and the caller's `for await`, which may read late or never. Unbounded on
 * purpose: the pump must reach the terminal record for `result` to settle whether or not
 * anyone reads the events.
 */
export class EventQueue<T> {
  #items: T[] = [];
  #head = 0;
  #end: { failed: false } | { failed: true; error: unknown } | undefined;
  #wake: (() => void) | undefined;

  push(item: T): void {
    if (this.#end !== undefined) return;
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
  }

  #wakeReader(): void {
    const wake = this.#wake;
    this.#wake = undefined;
    wake?.();
  }
}
