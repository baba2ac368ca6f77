import { once } from "node:events";
import { createServer } from "node:http";
import type { AddressInfo } from "node:net";
import { afterAll, describe, expect, it } from "vitest";
import { SsrfBlockedError } from "../../src/outbound/errors.js";
import { configureDefaultGuard, safeFetch, validateUpstreamUrl } from "../../src/outbound/guard.js";

// The process-wide guard is what globalThis.APP_SERVER exposes; vitest runs each test
// file in its own fork, so reconfiguring it here touches no other file.

const server = createServer((req, res) => res.end(`hello from ${req.url}`));
server.listen(0, "127.0.0.1");
await once(server, "listening");
const { port } = server.address() as AddressInfo;

afterAll(async () => {
  configureDefaultGuard({}); // closes the configured guard's pooled connections
  server.closeAllConnections();
  await new Promise((resolve) => server.close(resolve));
});

describe("the process-wide guard", () => {
  it("blocks loopback before it is configured", async () => {
    const err = await validateUpstreamUrl(`http://127.0.0.1:${port}/`).catch((e: unknown) => e);
    expect(err).toBeInstanceOf(SsrfBlockedError);
    expect((err as SsrfBlockedError).details.reason).toBe("loopback");
  });

  it("follows configureDefaultGuard for both functions", async () => {
    configureDefaultGuard({
      allow: [`upstream.test:${port}`],
      resolve: async () => [{ address: "127.0.0.1", family: 4 }],
    });
    const url = await validateUpstreamUrl(`http://upstream.test:${port}/x`);
    expect(url.href).toBe(`http://upstream.test:${port}/x`);
    const res = await safeFetch(`http://upstream.test:${port}/greet`);
    expect(await res.text()).toBe("hello from /greet");

    const blocked = await safeFetch(`http://other.test:${port}/`).catch((e: unknown) => e);
    expect(blocked).toBeInstanceOf(SsrfBlockedError);
    expect((blocked as SsrfBlockedError).details).toMatchObject({ reason: "loopback", address: "127.0.0.1" });
  });
});
