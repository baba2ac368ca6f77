/**
 * The queue between a `$stream` call's pump and its `events` loop (docs/guides/browser.md
 * "Streaming calls"), bundled from the source into Chromium: events wait for a reader who
 * has not come yet, and are dropped, not kept, once the reader has left the loop early.
 */
import { fileURLToPath } from "node:url";
import { build } from "esbuild";
import type { Browser, Page } from "playwright-core";
import { afterAll, beforeAll, expect, it } from "vitest";
import { describeInBrowser, launchChromium } from "../helpers/browser.js";

const EVENT_QUEUE = fileURLToPath(new URL("../../src/client/event-queue.ts", import.meta.url));

interface Queue {
  push(item: unknown): void;
  close(): void;
  fail(error: unknown): void;
  drain(): AsyncGenerator<unknown, void, undefined>;
  readonly size: number;
}

interface QueueWindow {
  queueModule: { EventQueue: new () => Queue };
}

describeInBrowser("EventQueue", () => {
  let browser: Browser;
  let page: Page;

  beforeAll(async () => {
    const bundled = await build({
      entryPoints: [EVENT_QUEUE],
      bundle: true,
      write: false,
      format: "iife",
      globalName: "queueModule",
      target: ["es2022"],
      logLevel: "silent",
    });
    browser = await launchChromium();
    page = await browser.newPage();
    await page.addScriptTag({ content: bundled.outputFiles[0]!.text });
  });
  afterAll(async () => {
    await browser?.close();
  });

  it("keeps the events for a reader who has not started, in order, then ends as the pump ended", async () => {
    const out = await page.evaluate(async () => {
      const { EventQueue } = (globalThis as unknown as QueueWindow).queueModule;
      const queue = new EventQueue();
      for (let i = 0; i < 3; i++) queue.push(i);
      const waiting = queue.size;
      queue.fail(new Error("ended"));
      queue.push("after the end");
      const read: unknown[] = [];
      try {
        for await (const item of queue.drain()) read.push(item);
      } catch (error) {
        read.push((error as Error).message);
      }
      return { waiting, read, left: queue.size };
    });
    expect(out).toEqual({ waiting: 3, read: [0, 1, 2, "ended"], left: 0 });
  });

  it("drops what is buffered and all later pushes once the reader leaves the loop early", async () => {
    const out = await page.evaluate(async () => {
      const { EventQueue } = (globalThis as unknown as QueueWindow).queueModule;
      const queue = new EventQueue();
      for (let i = 0; i < 3; i++) queue.push(i);
      const read: unknown[] = [];
      for await (const item of queue.drain()) {
        read.push(item);
        break;
      }
      const afterBreak = queue.size;
      for (let i = 0; i < 1000; i++) queue.push({ i });
      const afterPushes = queue.size;
      queue.close();
      return { read, afterBreak, afterPushes };
    });
    expect(out).toEqual({ read: [0], afterBreak: 0, afterPushes: 0 });
  });

  it("a reader whose loop throws has left too", async () => {
    const out = await page.evaluate(async () => {
      const { EventQueue } = (globalThis as unknown as QueueWindow).queueModule;
      const queue = new EventQueue();
      queue.push("first");
      let thrown = "";
      try {
        for await (const item of queue.drain()) throw new Error(`could not handle ${String(item)}`);
      } catch (error) {
        thrown = (error as Error).message;
      }
      queue.push("second");
      return { thrown, left: queue.size };
    });
    expect(out).toEqual({ thrown: "could not handle first", left: 0 });
  });
});
