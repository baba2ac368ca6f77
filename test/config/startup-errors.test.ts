// docs/reference/configuration.md: a config the server cannot use stops the start with one line that
// names what is wrong — the key path, the variable, or the file — whether `node index.js`
// reads it (exit 1) or `createServer` is handed it (a StartupError). Objects are strict, and
// a boolean must be a real boolean. (A proxy's own start-up checks: test/proxy/verifiers.test.ts.)
import { describe, expect, it } from "vitest";
import { startServer } from "../helpers/server.js";
import { expectStartupFailure } from "../helpers/process.js";
import { tempApp } from "../helpers/app-root.js";

describe("node index.js with a bad config", () => {
  const failures: Array<[string, () => { args: string[]; env?: Record<string, string> }, RegExp]> = [
    ["a config value of the wrong type, naming the key path", () => ({ args: ["--root", tempApp({ config: { server: { rpc: { timeoutMs: "fast" } } } })] }), /server\.rpc\.timeoutMs/],
    ["an unknown config key, naming it and the key meant", () => ({ args: ["--root", tempApp({ config: { server: { sesion: {} } } })] }), /: server\.sesion: unknown key; did you mean "session"\?$/],
    ["a config file that is not JSON", () => ({ args: ["--root", tempApp({ config: "{ nope" })] }), /not valid JSON/],
    ["a config file with a __proto__ key", () => ({ args: ["--root", tempApp({ config: '{ "__proto__": { "polluted": true } }' })] }), /not valid JSON: .*prototype/],
    [
      "an unset referenced secret variable, naming the key and the variable",
      () => ({ args: ["--root", tempApp({ config: { plugins: { x: { apiKey: "<% COUNTERPART_TEST_UNSET_KEY %>" } } } })] }),
      /plugins\.x\.apiKey.*COUNTERPART_TEST_UNSET_KEY/,
    ],
    [
      "an empty referenced variable",
      () => ({ args: ["--root", tempApp({ config: { plugins: { x: { apiKey: "<% COUNTERPART_TEST_EMPTY_KEY %>" } } } })], env: { COUNTERPART_TEST_EMPTY_KEY: "" } }),
      /plugins\.x\.apiKey.*COUNTERPART_TEST_EMPTY_KEY, which is empty/,
    ],
    ["a config file that does not exist", () => ({ args: ["--root", tempApp(), "--config", "/nonexistent/app.config.json"] }), /\/nonexistent\/app\.config\.json/],
  ];
  for (const [name, setup, message] of failures) {
    it(`exits non-zero with one clear line for ${name}`, async () => {
      const { args, env } = setup();
      await expectStartupFailure(message, args, env);
    });
  }

  it("reports every problem at once: a first line counting them, then one indented line each, key path first", async () => {
    const root = tempApp({ config: { server: { sesion: {}, rpc: { timeoutMs: "fast", maxBodyByte: 10 } }, plugin: {} } });
    const { stderr } = await expectStartupFailure(/^counterpart: .*app\.config\.json: 4 problems:$/, ["--root", root]);
    expect(stderr.trim().split("\n").slice(1).sort()).toEqual([
      '  plugin: unknown key; did you mean "plugins"?',
      '  server.rpc.maxBodyByte: unknown key; did you mean "maxBodyBytes"?',
      "  server.rpc.timeoutMs: expected number, received string",
      '  server.sesion: unknown key; did you mean "session"?',
    ]);
  });
});

describe("createServer with a bad config", () => {
  const refused = (config: unknown) => startServer({ root: tempApp(), config: config as never });

  it("tells the kinds of failure apart by a stable code", async () => {
    await expect(refused({ server: { rpc: { timeoutMs: "fast" } } })).rejects.toMatchObject({ name: "StartupError", code: "STARTUP_CONFIG_INVALID" });
    await expect(refused({ plugins: { x: { key: "<% COUNTERPART_TEST_UNSET_KEY %>" } } })).rejects.toMatchObject({ code: "STARTUP_ENV_MISSING" });
    await expect(refused("/nonexistent/app.config.json")).rejects.toMatchObject({ code: "STARTUP_CONFIG_UNREADABLE" });
    await expect(startServer({ root: "/nonexistent-app-root" })).rejects.toMatchObject({ code: "STARTUP_ROOT_UNREADABLE" });
    await expect(refused({ server: { secure: { rpcVerifiers: { default: { verifiers: { nobody: {} } } } } } })).rejects.toMatchObject({
      code: "STARTUP_UNKNOWN_VERIFIER",
    });
  });

  it("names the key path down to an array index", async () => {
    await expect(refused({ server: { allowedOrigins: ["https://viewer.example", 7] } })).rejects.toThrow(
      /^config: server\.allowedOrigins\.1: expected string, received number$/,
    );
  });

  it("says what is wrong with a proxy's baseUrl: its scheme, or that it is no URL at all", async () => {
    await expect(refused({ server: { secure: { proxies: { up: { baseUrl: "htp://api.example" } } } } })).rejects.toThrow(
      /^config: server\.secure\.proxies\.up\.baseUrl: must be http: or https:, not htp:$/,
    );
    await expect(refused({ server: { secure: { proxies: { up: { baseUrl: "api.example" } } } } })).rejects.toThrow(
      /^config: server\.secure\.proxies\.up\.baseUrl: must be an absolute URL, such as "https:\/\/api\.example"$/,
    );
    await expect(refused({ server: { publicOrigin: "ftp://viewer.example" } })).rejects.toThrow(/^config: server\.publicOrigin: must be http: or https:, not ftp:$/);
  });

  it("refuses a duration a Node timer cannot hold (it would fire at once), naming the key", async () => {
    await expect(refused({ server: { rpc: { streamHeartbeatMs: 3_000_000_000 } } })).rejects.toThrow(/server\.rpc\.streamHeartbeatMs: .*2147483647/);
    await expect(refused({ server: { rpc: { timeoutMs: 2 ** 31 } } })).rejects.toThrow(/server\.rpc\.timeoutMs/);
  });

  it("refuses an unknown key at any depth, naming it and the key of that object it is nearest to", async () => {
    await expect(refused({ server: { secure: { proxies: { up: { baseUrl: "http://127.0.0.1:1", timeout: 5 } } } } })).rejects.toThrow(
      /^config: server\.secure\.proxies\.up\.timeout: unknown key; did you mean "timeoutMs"\?$/,
    );
    // Nothing near enough: no guess.
    await expect(refused({ server: { rpc: { zzz: 1 } } })).rejects.toThrow(/^config: server\.rpc\.zzz: unknown key$/);
  });

  it("reports every problem in one STARTUP_CONFIG_INVALID, each with its suggestion", async () => {
    const error = await refused({ server: { trustProxi: true, metrics: { enabeld: true } } }).catch((caught: unknown) => caught);
    expect(error).toMatchObject({ code: "STARTUP_CONFIG_INVALID" });
    expect((error as Error).message.split("\n")).toEqual([
      "config: 2 problems:",
      '  server.metrics.enabeld: unknown key; did you mean "enabled"?',
      '  server.trustProxi: unknown key; did you mean "trustProxy"?',
    ]);
  });

  it('refuses forward: "true": only a real boolean switches token forwarding on', async () => {
    await expect(refused({ server: { auth: { jwt: { secret: "a-jwt-secret-that-is-32-bytes-long", forward: "true" } } } })).rejects.toThrow(
      /server\.auth\.jwt\.forward/,
    );
    const proxy = { baseUrl: "http://127.0.0.1:1", auth: { verifiers: ["jwt"], jwt: { secret: "a-jwt-secret-that-is-32-bytes-long", forward: "true" } } };
    await expect(refused({ server: { secure: { proxies: { up: proxy } } } })).rejects.toThrow(/server\.secure\.proxies\.up\.auth\.jwt\.forward/);
  });

  it("refuses rpcVerifiers and its legacy alias rpcAuth side by side", async () => {
    await expect(refused({ server: { secure: { rpcVerifiers: { default: {} }, rpcAuth: { default: {} } } } })).rejects.toThrow(
      /server\.secure\.rpcVerifiers and its legacy alias server\.secure\.rpcAuth are both set/,
    );
  });

  it("refuses a verifier context that names a verifier nobody registered", async () => {
    const root = tempApp({ files: { "plugins/p/a.server.mjs": "export function m() {}" } });
    await expect(
      startServer({ root, config: { server: { secure: { rpcVerifiers: { default: { verifiers: { ghost: {} } } } } } } }),
    ).rejects.toThrow(/rpcVerifiers\.default\.verifiers\.ghost: no verifier named "ghost"/);
  });
});
