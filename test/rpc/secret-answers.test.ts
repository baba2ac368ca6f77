// docs/reference/log-events.md: a secret the log masks is masked in error answers too, inline and isolated,
// whether the method threw an Error (its message answered in dev mode) or an RpcError.
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { join } from "node:path";
import { startServer, type TestServer } from "../helpers/server.js";
import { openViewer, rawRequest, type Viewer } from "../helpers/http.js";

const ROOT = join(import.meta.dirname, "../fixtures/secret-app");
const API_KEY = "sk-live-7f3a9c2e5b1d";
const QUOTED = 'quo"te\\secret';
const PIN = "98765432";
/** Holds API_KEY, and comes after it in the config. */
const AWS_KEY = `AKIA-${API_KEY}-9f8e7d6c5b4a`;
const ENV = { LEAKY_API_KEY: API_KEY, LEAKY_AWS_KEY: AWS_KEY, LEAKY_QUOTED: QUOTED, LEAKY_PIN: PIN, LEAKY_ODD: "an-odd-secret-unused" };
/** A secret that matches the JSON punctuation of an RpcError body (`"code":"LEAKY_UPSTREAM","details"`). */
const STRUCTURAL = 'M","details';
const EXPECTED_RPC_ERROR = {
  error: "upstream refused [Redacted]",
  code: "LEAKY_UPSTREAM",
  details: {
    sent: "[Redacted]",
    headers: [{ authorization: "Bearer [Redacted]" }],
    quoted: "[Redacted]",
    // A secret made of digits, answered as a bare number, becomes a string: still JSON.
    pin: "[Redacted]",
  },
};

/** Every form a secret could take in a JSON body. */
function expectNoSecret(body: string): void {
  for (const secret of [API_KEY, QUOTED, JSON.stringify(QUOTED).slice(1, -1), PIN]) expect(body).not.toContain(secret);
  // Nor any part of a secret that holds another one.
  for (const part of ["AKIA-", "-9f8e7d6c5b4a"]) expect(body).not.toContain(part);
}

async function call(app: TestServer, viewer: Viewer, method: string) {
  const answer = await rawRequest(app.url, {
    path: `/__rpc/plugin/leaky/${method}`,
    headers: { "content-type": "application/json", cookie: viewer.cookie, "x-app-csrf": viewer.csrf },
    chunks: ['{"args":[]}'],
  });
  return { ...answer, json: JSON.parse(answer.body) as { error: string; code: string; details: Record<string, unknown> } };
}

describe("error answers never carry a configured secret", () => {
  let app: TestServer;
  let viewer: Viewer;
  beforeAll(async () => {
    app = await startServer({ root: ROOT, dev: true, env: { ...ENV, LEAKY_ODD: STRUCTURAL } });
    viewer = await openViewer(app.url);
  });
  afterAll(() => app.close());

  for (const method of ["inlineError", "isolatedError"]) {
    it(`dev mode, ${method}: a thrown Error's message is answered with the secret masked`, async () => {
      const answer = await call(app, viewer, method);
      expect(answer.status).toBe(500);
      expectNoSecret(answer.body);
      expect(answer.json.code).toBe("RPC_INTERNAL_ERROR");
      expect(answer.json.error).toBe("key [Redacted]");
      expect(answer.json.details).toEqual({ requestId: expect.any(String) });
    });
  }

  for (const method of ["inlineRpcError", "isolatedRpcError"]) {
    it(`dev mode, ${method}: an RpcError's message and details are answered with every secret masked, as valid JSON`, async () => {
      // `call` parses the body: masking the secret that matches the body's punctuation
      // must not leave it invalid.
      const answer = await call(app, viewer, method);
      expect(answer.status).toBe(502);
      expectNoSecret(answer.body);
      expect(answer.json).toEqual(EXPECTED_RPC_ERROR);
    });
  }

  it("a secret that holds another secret is masked whole, in the answer and in the log line", async () => {
    const answer = await call(app, viewer, "nestedError");
    expect(answer.status).toBe(500);
    // Soft: a failure shows both the answer and the log line.
    expect.soft(answer.json.error).toBe("key [Redacted]");
    const logged = app.logs.lines.find((line) => line.event === "rpc.error" && line.method === "nestedError");
    expect.soft((logged?.err as { message?: string } | undefined)?.message).toBe("key [Redacted]");
    expectNoSecret(answer.body);
    expectNoSecret(app.logs.text());
  });

  it("the log line of the same call is masked as well, and a success answer is untouched", async () => {
    await call(app, viewer, "inlineError");
    expectNoSecret(app.logs.text());
    const ok = await call(app, viewer, "fine");
    expect(ok.status).toBe(200);
    expect(ok.json).toEqual({ result: { length: API_KEY.length } });
  });
});

describe("outside dev mode", () => {
  it("an RpcError quoting a secret is masked too", async () => {
    const app = await startServer({ root: ROOT, env: ENV });
    try {
      const viewer = await openViewer(app.url);
      const answer = await call(app, viewer, "inlineRpcError");
      expect(answer.status).toBe(502);
      expectNoSecret(answer.body);
      expect(answer.json).toEqual(EXPECTED_RPC_ERROR);
      const internal = await call(app, viewer, "isolatedError");
      expect(internal.status).toBe(500);
      expectNoSecret(internal.body);
      expect(internal.json.error).not.toContain("key");
    } finally {
      await app.close();
    }
  });
});
