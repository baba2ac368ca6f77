/**
 * docs/guides/deployment.md "Node lines": a start that has not finished logs what it still waits for. Each case makes
 * one step hang for real (a server file's top-level await, a boot hook, a Redis that
 * accepts and never answers) and reads the warning from the server's own log.
 */
import { createServer as createTcpServer, type Server, type Socket } from "node:net";
import { join } from "node:path";
import { afterAll, describe, expect, it } from "vitest";
import { createServer } from "../../dist/index.js";
import { tempApp } from "../helpers/app-root.js";
import { LogCapture, TEST_SESSION_SECRET } from "../helpers/server.js";
import { waitFor } from "../helpers/wait.js";

const NEVER = "await new Promise(() => {});\n";

function startHanging(root: string, logs: LogCapture, config?: object): void {
  // Never settles: the test reads the warnings the start logs meanwhile.
  void createServer({ root, config, logDestination: logs, env: { APP_SESSION_SECRET: TEST_SESSION_SECRET }, startReportAfterMs: 100 }).catch(() => {});
}

function warnings(logs: LogCapture): string[] {
  return logs.lines.map((line) => String(line.msg ?? "")).filter((msg) => msg.startsWith("still starting after"));
}

describe("a start that hangs", () => {
  it("names the server file whose top-level await never settles", async () => {
    const root = tempApp({ files: { "plugins/slow/slow.server.ts": `${NEVER}export function ping(): string { return "pong"; }\n` } });
    const logs = new LogCapture();
    startHanging(root, logs);
    await waitFor(() => warnings(logs).length >= 2);
    expect(warnings(logs)[0]).toMatch(/^still starting after \d+ s: waiting for the server file (.+) to load$/);
    expect(warnings(logs)[0]).toContain(join(root, "plugins/slow/slow.server.ts"));
    expect(logs.lines.find((line) => String(line.msg).startsWith("still starting"))).toMatchObject({ level: 40, waitingFor: expect.stringContaining("slow.server.ts") });
  });

  it("names the boot hook whose register() never returns", async () => {
    const root = tempApp({ files: { "modules/stuck/register.server.mjs": `export async function register() { ${NEVER} }\n` } });
    const logs = new LogCapture();
    startHanging(root, logs);
    await waitFor(() => warnings(logs).length >= 1);
    expect(warnings(logs)[0]).toMatch(/waiting for the boot hook .*modules\/stuck\/register\.server\.mjs \(module stuck\) to return from register\(\)$/);
  });

  describe("with a Redis that accepts connections and never answers", () => {
    const sockets: Socket[] = [];
    let silent: Server;
    afterAll(() => {
      for (const socket of sockets) socket.destroy();
      silent?.close();
    });

    it("names Redis by its address, never by a URL that may hold a password", async () => {
      silent = createTcpServer((socket) => sockets.push(socket));
      await new Promise<void>((resolve) => silent.listen(0, "127.0.0.1", resolve));
      const port = (silent.address() as { port: number }).port;
      const logs = new LogCapture();
      startHanging(tempApp(), logs, { server: { redis: { url: `redis://:hunter2@127.0.0.1:${port}`, commandTimeoutMs: 3000 } } });
      await waitFor(() => warnings(logs).length >= 1);
      expect(warnings(logs)[0]).toMatch(new RegExp(`^still starting after \\d+ s: waiting for Redis at 127\\.0\\.0\\.1:${port}$`));
      expect(logs.text()).not.toContain("hunter2");
    });
  });
});
