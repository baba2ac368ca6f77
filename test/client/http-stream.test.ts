/**
 * HttpClient.stream in Chromium (docs/guides/browser.md "`HttpClient.stream`"): records
 * read while the answer is still arriving, NDJSON split anywhere by the network, what
 * counts as a broken stream, how a reader stops it, and the request path it shares with
 * request(): headers, retries only before an OK answer, HttpError, the 401 refresh.
 */
import { beforeEach, expect, it } from "vitest";
import { describeInBrowser, useBrowserFixture } from "../helpers/browser.js";
import { CSRF_TOKEN } from "../helpers/fixture-server.js";
import { STREAM_PAGE_HELPERS, type StreamWindow } from "../helpers/stream-page.js";
import { waitFor } from "../helpers/wait.js";

const NDJSON = { "content-type": "application/x-ndjson; charset=utf-8" };

describeInBrowser("HttpClient.stream", () => {
  const fx = useBrowserFixture();
  beforeEach(async () => {
    await fx.page.evaluate(STREAM_PAGE_HELPERS);
  });

  it("resolves when the headers arrive and yields each record as its line arrives", async () => {
    fx.server.script("/live", [{ headers: NDJSON, chunks: ['{"n":1}\n', '{"n":2}\n'], chunkDelayMs: 800 }]);
    const result = await fx.page.evaluate(async () => {
      const w = globalThis as unknown as StreamWindow;
      const response = await new w.HttpClient().stream("/live");
      const headersAt = Date.now();
      const read = await w.drain(response.lines());
      return { status: response.status, ok: response.ok, type: response.headers.get("content-type"), headersAt, read };
    });
    expect(result).toMatchObject({ status: 200, ok: true, type: NDJSON["content-type"] });
    expect(result.read.items).toEqual([{ n: 1 }, { n: 2 }]);
    // The headers and the first record were in the page before the server wrote the second.
    const sent = fx.server.hits("/live")[0]!.chunksSentAt!;
    expect(result.headersAt).toBeLessThan(sent[1]!);
    expect(result.read.clock[0]!).toBeLessThan(sent[1]!);
  });

  it("decodes lines split anywhere, UTF-8 characters split across chunks, \\r\\n endings, blank lines and an unterminated last line", async () => {
    const text = Buffer.from('{"word":"žluťoučký 🐴"}\r\n\n   \n{"b":');
    const horse = text.indexOf(Buffer.from("🐴"));
    fx.server.script("/split", [
      {
        headers: NDJSON,
        // Cut inside "ž" (2 bytes) and inside the horse (4 bytes).
        chunks: [[...text.subarray(0, 11)], [...text.subarray(11, horse + 2)], [...text.subarray(horse + 2)], '2}\r\n\r\n{"c":[3]}'],
        chunkDelayMs: 20,
      },
    ]);
    const read = await fx.page.evaluate(async () => {
      const w = globalThis as unknown as StreamWindow;
      const response = await new w.HttpClient().stream("/split");
      return w.drain(response.lines());
    });
    expect(read).toEqual({ items: [{ word: "žluťoučký 🐴" }, { b: 2 }, { c: [3] }], times: expect.any(Array), clock: expect.any(Array) });
  });

  it("throws on a malformed complete line after the records before it, and releases the connection", async () => {
    fx.server.script("/malformed", [{ headers: NDJSON, chunks: ['{"ok":1}\n{not json}\n', '{"never":1}\n'], chunkDelayMs: 50, holdOpenMs: 5000 }]);
    const read = await fx.page.evaluate(async () => {
      const w = globalThis as unknown as StreamWindow;
      return w.drain((await new w.HttpClient().stream("/malformed")).lines());
    });
    expect(read.items).toEqual([{ ok: 1 }]);
    expect(read.error).toMatchObject({ name: "ResponseParseError", code: "CLIENT_BAD_RESPONSE" });
    await waitFor(() => fx.server.hits("/malformed")[0]?.clientClosedAt, 4000, "the client to close the connection");
  });

  it("accepts an unterminated last line that parses and refuses one that does not as truncated mid-record", async () => {
    fx.server.script("/cut", [{ headers: NDJSON, chunks: ['{"a":1}\n{"b":'] }]);
    const read = await fx.page.evaluate(async () => {
      const w = globalThis as unknown as StreamWindow;
      return w.drain((await new w.HttpClient().stream("/cut")).lines());
    });
    expect(read.items).toEqual([{ a: 1 }]);
    expect(read.error).toMatchObject({ name: "StreamError", code: "CLIENT_STREAM_TRUNCATED", message: expect.stringContaining("truncated mid-record") });
  });

  it("leaving the loop early cancels the answer: the server sees the connection close", async () => {
    fx.server.script("/endless", [{ headers: NDJSON, chunks: ['{"i":0}\n', '{"i":1}\n'], chunkDelayMs: 10, holdOpenMs: 5000 }]);
    const read = await fx.page.evaluate(async () => {
      const w = globalThis as unknown as StreamWindow;
      return w.drain((await new w.HttpClient().stream("/endless")).lines(), 1);
    });
    expect(read.items).toEqual([{ i: 0 }]);
    const hit = await waitFor(() => fx.server.hits("/endless")[0]?.clientClosedAt, 4000, "the client to close the connection");
    // The answer would have stayed open 5 s.
    expect(hit - fx.server.hits("/endless")[0]!.time).toBeLessThan(4000);
  });

  it("cancel(reason) ends a loop waiting for the next line, which throws the reason", async () => {
    fx.server.script("/waiting", [{ headers: NDJSON, chunks: ['{"first":true}\n'], holdOpenMs: 5000 }]);
    const read = await fx.page.evaluate(async () => {
      const w = globalThis as unknown as StreamWindow;
      const response = await new w.HttpClient().stream("/waiting");
      setTimeout(() => response.cancel(new Error("user left")), 200);
      const started = w.now();
      const outcome = await w.drain(response.lines());
      return { ...outcome, waited: w.now() - started };
    });
    expect(read.items).toEqual([{ first: true }]);
    expect(read.error).toMatchObject({ message: "user left" });
    expect(read.waited).toBeLessThan(4000);
    await waitFor(() => fx.server.hits("/waiting")[0]?.clientClosedAt, 4000, "the client to close the connection");
  });

  it("the caller's signal ends the body too, with an AbortError", async () => {
    fx.server.script("/signalled", [{ headers: NDJSON, chunks: ['{"first":true}\n'], holdOpenMs: 5000 }]);
    const read = await fx.page.evaluate(async () => {
      const w = globalThis as unknown as StreamWindow;
      const controller = new AbortController();
      const response = await new w.HttpClient().stream("/signalled", { signal: controller.signal });
      setTimeout(() => controller.abort(), 200);
      return w.drain(response.lines());
    });
    expect(read.items).toEqual([{ first: true }]);
    expect(read.error).toMatchObject({ name: "AbortError" });
  });

  it("timeoutMs bounds the wait for the headers, never the body", async () => {
    fx.server.script("/late-headers", [{ delayMs: 1000, headers: NDJSON, body: "{}\n" }]);
    fx.server.script("/slow-body", [{ headers: NDJSON, chunks: ['{"a":1}\n', '{"b":2}\n'], chunkDelayMs: 600 }]);
    const result = await fx.page.evaluate(async () => {
      const w = globalThis as unknown as StreamWindow;
      const client = new w.HttpClient({ timeoutMs: 300 });
      const late = await w.settle(client.stream("/late-headers"));
      const slow = await w.drain((await client.stream("/slow-body")).lines());
      return { late, slow };
    });
    expect(result.late).toMatchObject({ ok: false, name: "TimeoutError", code: "CLIENT_TIMEOUT" });
    expect(result.slow).toEqual({ items: [{ a: 1 }, { b: 2 }], times: expect.any(Array), clock: expect.any(Array) });
  });

  it("onChunk is told of each piece of the body as it arrives, before the records it completes, for lines() and text()", async () => {
    const body = '{"a":1}\n{"b":2}\n';
    fx.server.script("/pieces", [{ headers: NDJSON, chunks: ['{"a":', "1}\n", '{"b":2}\n'], chunkDelayMs: 100 }]);
    const result = await fx.page.evaluate(async () => {
      const w = globalThis as unknown as StreamWindow;
      const client = new w.HttpClient();
      // What onChunk had seen by the time each record, or the whole text, came out.
      const read = async (how: "lines" | "text") => {
        let seen = "";
        const decoder = new TextDecoder();
        const onChunk = (chunk: Uint8Array) => {
          seen += decoder.decode(chunk, { stream: true });
        };
        const response = await client.stream("/pieces", { onChunk });
        const out: { record: unknown; seen: string }[] = [];
        if (how === "text") out.push({ record: await response.text(), seen });
        else for await (const record of response.lines()) out.push({ record, seen });
        return out;
      };
      return { lines: await read("lines"), text: await read("text"), bad: await w.settle(client.stream("/pieces", { onChunk: "no" })) };
    });
    expect(result.lines.map((line) => line.record)).toEqual([{ a: 1 }, { b: 2 }]);
    expect(result.lines[0]!.seen.startsWith('{"a":1}\n')).toBe(true);
    expect(result.lines[1]!.seen).toBe(body);
    expect(result.text).toEqual([{ record: body, seen: body }]);
    expect(result.bad).toMatchObject({ ok: false, name: "TypeError" });
  });

  it("sends a POST with a JSON body, Accept NDJSON, the CSRF token, auth headers and the caller's headers", async () => {
    fx.server.script("/sent", [{ headers: NDJSON, body: '{"done":true}\n' }]);
    await fx.page.evaluate(async () => {
      const w = globalThis as unknown as StreamWindow;
      w.AppUser.setSecret("tok", "jwt", "ctx");
      const client = new w.HttpClient({ auth: { contextId: "ctx", types: ["jwt"] } });
      const response = await client.stream("/sent", { body: { q: "ø" }, headers: { "X-Extra": "1" }, query: { page: 2 } });
      await w.drain(response.lines());
    });
    const [hit] = fx.server.hits("/sent");
    expect(hit).toMatchObject({ method: "POST", url: "/sent?page=2", body: '{"q":"ø"}' });
    expect(hit!.headers).toMatchObject({
      "content-type": "application/json",
      accept: "application/x-ndjson",
      "x-app-csrf": CSRF_TOKEN,
      authorization: "Bearer tok",
      "x-extra": "1",
    });
  });

  it("retries a POST on 503 before the stream starts, and never once it has started", async () => {
    fx.server.script("/busy", [{ status: 503, headers: { "Retry-After": "0" }, body: { error: "busy" } }, { headers: NDJSON, body: '{"second":true}\n' }]);
    fx.server.script("/broken", [{ headers: NDJSON, chunks: ['{"part":1}\n'], holdOpenMs: 200, destroyAfterChunks: true }, { headers: NDJSON, body: '{"replayed":true}\n' }]);
    const result = await fx.page.evaluate(async () => {
      const w = globalThis as unknown as StreamWindow;
      const client = new w.HttpClient();
      const busy = await w.drain((await client.stream("/busy")).lines());
      const broken = await w.drain((await client.stream("/broken")).lines());
      return { busy, broken };
    });
    expect(result.busy.items).toEqual([{ second: true }]);
    expect(fx.server.hits("/busy")).toHaveLength(2);
    expect(result.broken.items).toEqual([{ part: 1 }]);
    expect(result.broken.error).toMatchObject({ name: "TypeError" });
    expect(fx.server.hits("/broken")).toHaveLength(1);
  });

  it("does not retry a POST on 500, and rejects with the same HttpError request() gives", async () => {
    const refusal = { status: 409, body: { error: "Taken", code: "NAME_TAKEN", details: { name: "x" } } };
    fx.server.script("/refused", [refusal]);
    fx.server.script("/failing", [{ status: 500, body: { error: "boom" } }, { headers: NDJSON, body: "{}\n" }]);
    const result = await fx.page.evaluate(async () => {
      const w = globalThis as unknown as StreamWindow;
      const client = new w.HttpClient();
      return {
        streamed: await w.settle(client.stream("/refused", { body: {} })),
        requested: await w.settle(client.post("/refused", {})),
        failing: await w.settle(client.stream("/failing")),
      };
    });
    expect(result.streamed).toEqual(result.requested);
    expect(result.streamed).toMatchObject({ ok: false, name: "HttpError", status: 409, code: "NAME_TAKEN", details: { name: "x" }, isHttpError: true });
    expect(result.failing).toMatchObject({ ok: false, status: 500 });
    expect(fx.server.hits("/failing")).toHaveLength(1);
  });

  it("on a 401 asks for a new secret once and streams the replay", async () => {
    fx.server.script("/guarded", (request) =>
      request.headers.authorization === "Bearer fresh" ? { headers: NDJSON, body: '{"in":true}\n' } : { status: 401, body: { error: "expired" } },
    );
    const result = await fx.page.evaluate(async () => {
      const w = globalThis as unknown as StreamWindow;
      w.AppUser.setSecret("stale", "jwt", "ctx");
      let asked = 0;
      w.AppUser.addHandler("requestSecretUpdate", () => {
        asked += 1;
        setTimeout(() => w.AppUser.setSecret("fresh", "jwt", "ctx"), 50);
      });
      const client = new w.HttpClient({ auth: { contextId: "ctx", types: ["jwt"] } });
      const read = await w.drain((await client.stream("/guarded")).lines());
      return { read, asked };
    });
    expect(result).toEqual({ read: { items: [{ in: true }], times: expect.any(Array), clock: expect.any(Array) }, asked: 1 });
    expect(fx.server.hits("/guarded").map((hit) => hit.headers.authorization)).toEqual(["Bearer stale", "Bearer fresh"]);
  });

  it("lines() can be read once", async () => {
    fx.server.script("/once", [{ headers: NDJSON, body: "{}\n" }]);
    const second = await fx.page.evaluate(async () => {
      const w = globalThis as unknown as StreamWindow;
      const response = await new w.HttpClient().stream("/once");
      await w.drain(response.lines());
      try {
        response.lines();
        return "no error";
      } catch (error) {
        return (error as Error).name;
      }
    });
    expect(second).toBe("TypeError");
  });
});
