/**
 * Page helpers for the streaming tests: `drain` reads an async iterable (a stream's
 * `lines()`, a `$stream` call's `events`) to its end, or to `stopAfter` items, and hands
 * back what arrived, when, and how it ended, as plain data that survives the trip to Node.
 */
import type { PageWindow, Settled } from "./browser.js";

export interface Drained {
  items: unknown[];
  /** ms since page start at which each item arrived. */
  times: number[];
  /** `Date.now()` at which each item arrived, to compare with what the server recorded. */
  clock: number[];
  error?: { name: string; code?: string; status?: number; message: string; details?: unknown };
}

export interface StreamWindow extends PageWindow {
  drain: (iterable: AsyncIterable<unknown>, stopAfter?: number) => Promise<Drained>;
  /** A `$stream` handle's events and result, both read to their end. */
  finish: (handle: { events: AsyncIterable<unknown>; result: Promise<unknown> }) => Promise<{ drained: Drained; result: Settled }>;
}

/** Installs `drain` and `finish`; needs PAGE_HARNESS (`settle`, `now`) on the page. */
export const STREAM_PAGE_HELPERS = `
window.drain = async (iterable, stopAfter = Infinity) => {
  const items = [], times = [], clock = [];
  try {
    for await (const item of iterable) {
      items.push(item);
      times.push(window.now());
      clock.push(Date.now());
      if (items.length >= stopAfter) break;
    }
    return { items, times, clock };
  } catch (e) {
    return { items, times, clock, error: { name: e && e.name, code: e && e.code, status: e && e.status, message: String(e && e.message || e), details: e && e.details } };
  }
};
window.finish = async (handle) => {
  const [drained, result] = await Promise.all([window.drain(handle.events), window.settle(handle.result)]);
  return { drained, result };
};
`;
