// docs/reference/configuration.md: `<% NAME %>` in any string of the config takes the value of the
// environment variable NAME (an unset one stops the start, naming the key), and each plugin
// or module gets its own section of the config as `ctx.config`, frozen.
import { describe, expect, it } from "vitest";
import { startServer, useServer } from "../helpers/server.js";
import { rpc } from "../helpers/http.js";
import { tempApp } from "../helpers/app-root.js";

const SERVER_FILE = `export const policy = { config: { auth: { public: true } }, change: { auth: { public: true } } };
export function config(ctx) { return ctx.config; }
export function change(ctx) {
  try {
    ctx.config.nested.value = "changed";
    return "changed";
  } catch (error) {
    return error.name;
  }
}`;

const ROOT = tempApp({ files: { "plugins/p/p.server.mjs": SERVER_FILE, "plugins/q/q.server.mjs": SERVER_FILE, "modules/p/p.server.mjs": SERVER_FILE } });

describe("<% NAME %> substitution", () => {
  const app = useServer({
    root: ROOT,
    env: { API_KEY: "key-from-the-environment", API_HOST: "api.example" },
    config: {
      plugins: {
        p: { apiKey: "<% API_KEY %>", url: "https://<%API_HOST%>/v1?key=<%  API_KEY  %>", list: ["<% API_KEY %>", 3], plain: "<%- not a reference %>", nested: { value: 1 } },
      },
      modules: { p: { only: "the module's own section" } },
    },
  });

  it("puts the variable's value wherever the reference stands in a string, spaces or none", async () => {
    const answer = await rpc(app.url, "plugin/p/config");
    expect(answer.body.result).toEqual({
      apiKey: "key-from-the-environment",
      url: "https://api.example/v1?key=key-from-the-environment",
      list: ["key-from-the-environment", 3],
      plain: "<%- not a reference %>",
      nested: { value: 1 },
    });
  });

  it("hands each plugin and module its own section, and an empty one to those without", async () => {
    expect((await rpc(app.url, "module/p/config")).body.result).toEqual({ only: "the module's own section" });
    expect((await rpc(app.url, "plugin/q/config")).body.result).toEqual({});
  });

  it("hands the section over frozen: a method cannot change what the next call sees", async () => {
    expect((await rpc(app.url, "plugin/p/change")).body.result).toBe("TypeError");
    expect((await rpc(app.url, "plugin/p/config")).body.result.nested).toEqual({ value: 1 });
  });

  it("stops the start on an unset variable, naming the key path down to an array index", async () => {
    const config = { plugins: { p: { list: ["fine", "<% COUNTERPART_TEST_UNSET_VALUE %>"] } } };
    await expect(startServer({ root: ROOT, config })).rejects.toThrow(
      /^config key plugins\.p\.list\.1 references environment variable COUNTERPART_TEST_UNSET_VALUE, which is not set$/,
    );
  });
});

describe("<% NAME:-default %> and <% NAME-default %>", () => {
  it("use the default when unset (and, with :-, when empty); a set value wins; only values from the environment are secrets", async () => {
    const { substituteEnv } = await import("../../dist/config/substitute-env.js");
    const secrets = new Set<string>();
    const env = { SET: "from-env", EMPTY: "" };
    const out = substituteEnv(
      { a: "<% UNSET:-fallback value %>", b: "<% EMPTY:-fb %>", c: "<% EMPTY-dash %>", d: "<% UNSET-dash %>", e: "<%SET:-x%>", f: "<% UNSET:- %>", g: "k=<% SET-y %>;" },
      env,
      secrets,
    );
    expect(out).toEqual({ a: "fallback value", b: "fb", c: "", d: "dash", e: "from-env", f: "", g: "k=from-env;" });
    expect([...secrets]).toEqual(["from-env"]);
  });
});
