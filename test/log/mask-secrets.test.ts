// docs/reference/log-events.md: every configured secret — values substituted from <% NAME %>, JWT secrets —
// is masked wherever it stands in a log line, also when it needs JSON escaping or is all
// digits, and every line stays valid JSON. (Error answers: test/rpc/secret-answers.test.ts.)
import { describe, expect, it } from "vitest";
import { join } from "node:path";
import { useServer } from "../helpers/server.js";
import { rpc } from "../helpers/http.js";

const ROOT = join(import.meta.dirname, "../fixtures/runtime-app");

describe("secret masking", () => {
  const app = useServer({
    root: ROOT,
    dev: true,
    env: { DEMO_SECRET: "configured-secret-value-123", QUOTED: 'we"ird\\secret', PIN: "1234567" },
    config: { plugins: { rt: { apiKey: "<% DEMO_SECRET %>", quoted: "<% QUOTED %>", pin: "<% PIN %>" } }, server: { auth: { jwt: { secret: "another-configured-secret-of-32-bytes!!" } } } },
  });

  it("never logs configured secrets, even when a method logs one or throws it", async () => {
    const answer = await rpc(app.url, "plugin/rt/leak", { viewer: app.viewer });
    expect(answer.status).toBe(500);
    const text = app.logs.text();
    expect(text).toContain("calling upstream with key [Redacted]");
    expect(text).toContain("upstream refused key [Redacted]");
    expect(text).not.toContain("configured-secret-value-123");

    // Secrets that JSON escapes, and digit-only secrets: masked, and every line still JSON.
    expect((await rpc(app.url, "plugin/rt/leakMore", { viewer: app.viewer })).status).toBe(200);
    const line = app.logs.lines.find((entry) => typeof entry.msg === "string" && entry.msg.startsWith("quoted "));
    expect(line).toMatchObject({ msg: "quoted [Redacted] pin [Redacted]", quoted: "[Redacted]", count: 91234567, pin: "[Redacted]", pins: ["[Redacted]"] });
    expect(app.logs.lines.filter((entry) => "raw" in entry)).toEqual([]);
    expect(text).not.toContain("another-configured-secret-of-32-bytes!!");
  });
});
