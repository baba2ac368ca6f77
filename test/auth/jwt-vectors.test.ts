// Other projects' JWT test vectors (test/fixtures/vectors/jwt-vectors.json, sources in its
// README), each token sent as Authorization to GET /proxy/<alias>/echo of a real server
// with a valid session and CSRF token, in front of a real echo upstream. Two aliases, as
// the file's "about" says: `strict` (issuer, audience, no clock skew) and `loose` (neither,
// 30 s of skew). Each case expects 200 (forwarded) or 401 PROXY_AUTH_FAILED (not
// forwarded); "either" cases run and report their outcome without failing.
import { createHmac, generateKeyPairSync, sign as cryptoSign } from "node:crypto";
import { readFileSync } from "node:fs";
import { join } from "node:path";
import { CompactSign, SignJWT } from "jose";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { TEST_SESSION_SECRET, startServer, type TestServer } from "../helpers/server.js";
import { openViewer, send, type Viewer } from "../helpers/http.js";
import { runToExit } from "../helpers/process.js";
import { TestUpstream } from "../helpers/upstream.js";
import { b64url } from "../helpers/jwt.js";
import { tempApp } from "../helpers/app-root.js";

type Json = null | boolean | number | string | Json[] | { [key: string]: Json };

interface TokenVector {
  id: string;
  proxy: "strict" | "loose";
  expect: 200 | 401 | "either";
  source: string;
  case: string;
  note?: string;
  header?: Record<string, Json>;
  headerRaw?: string;
  payload?: Record<string, Json>;
  payloadRaw?: string;
  payloadEncoding?: BufferEncoding;
  unencodedPayload?: boolean;
  sig?: string;
  via?: string;
  transform?: string[];
  token?: string;
  authorization?: string | null;
}

interface StartupVector {
  id: string;
  case: string;
  config: Record<string, Json>;
  expect: { exitCode: number; stderrMentions: string };
}

interface VectorFile {
  iss: string;
  aud: string;
  vectors: TokenVector[];
  startup: StartupVector[];
}

const FILE = JSON.parse(readFileSync(join(import.meta.dirname, "../fixtures/vectors/jwt-vectors.json"), "utf8")) as VectorFile;
const SECRET = "jwt-vectors-server-secret-of-more-than-32-bytes";

// ---- Making a token from a vector, as the file's "about" describes ----

const NOW = /^\$now(?:([+-]\d+(?:\.\d+)?))?$/;

/** "$now+N" (a whole string) becomes a number; "$ISS" and "$AUD" are replaced inside strings. */
function substitute(value: Json, now: number): Json {
  if (typeof value === "string") {
    const match = NOW.exec(value);
    if (match) return now + Number(match[1] ?? 0);
    return value.replaceAll("$ISS", FILE.iss).replaceAll("$AUD", FILE.aud);
  }
  if (Array.isArray(value)) return value.map((item) => substitute(item, now));
  if (value !== null && typeof value === "object") {
    return Object.fromEntries(Object.entries(value).map(([key, item]) => [key, substitute(item, now)]));
  }
  return value;
}

/** The same in raw JSON text, where "$now+N" stands unquoted for a number. */
function substituteText(text: string, now: number): string {
  return text
    .replace(/\$now(?:([+-]\d+(?:\.\d+)?))?/g, (_all, offset: string | undefined) => String(now + Number(offset ?? 0)))
    .replaceAll("$ISS", FILE.iss)
    .replaceAll("$AUD", FILE.aud);
}

const rsa = generateKeyPairSync("rsa", { modulusLength: 2048 });
const ec = generateKeyPairSync("ec", { namedCurve: "P-256" });
const RSA_PUBLIC_PEM = rsa.publicKey.export({ type: "spki", format: "pem" }).toString();

/** `sig`: what the signature really is, whatever the header claims (default HS256 with the server secret). */
function signature(sig: string | undefined, data: string): string {
  const hmac = (algorithm: string, key: string) => createHmac(algorithm, key).update(data).digest("base64url");
  switch (sig ?? "HS256") {
    case "HS256":
      return hmac("sha256", SECRET);
    case "HS384":
      return hmac("sha384", SECRET);
    case "HS512":
      return hmac("sha512", SECRET);
    case "none":
      return "";
    case "RS256":
      return cryptoSign("sha256", Buffer.from(data), rsa.privateKey).toString("base64url");
    case "ES256":
      return cryptoSign("sha256", Buffer.from(data), { key: ec.privateKey, dsaEncoding: "ieee-p1363" }).toString("base64url");
    case "HS256-rsa-public-pem":
      return hmac("sha256", RSA_PUBLIC_PEM);
    case "HS256-wrong-secret":
      return hmac("sha256", "not-the-server-secret-but-just-as-long!!");
    case "HS256-empty-key":
      return hmac("sha256", "");
    case "HS256-attacker-key":
      // The key the vector's kid, jwk or jku would hand to a verifier that trusted them.
      return hmac("sha256", "attacker-key");
    default:
      throw new Error(`unknown sig "${sig}": teach this test how to sign it`);
  }
}

function applyTransform(token: string, transform: string, now: number): string {
  const parts = token.split(".");
  const colon = transform.indexOf(":");
  const [name, argument] = colon === -1 ? [transform, ""] : [transform.slice(0, colon), transform.slice(colon + 1)];
  switch (name) {
    case "sigSlice":
      return [parts[0], parts[1], parts[2]!.slice(0, Number(argument))].join(".");
    case "replaceHeader":
      return [b64url(substituteText(argument, now)), parts[1], parts[2]].join(".");
    case "replacePayload":
      return [parts[0], b64url(substituteText(argument, now)), parts[2]].join(".");
    case "replacePayloadSegment":
      return [parts[0], argument, parts[2]].join(".");
    case "twoParts":
      return [parts[0], parts[1]].join(".");
    case "appendSegment":
      return `${token}.${argument}`;
    case "fiveParts":
      // The shape of a compact JWE: five segments.
      return `${token}.${b64url("iv")}.${b64url("tag")}`;
    case "flattenedJson":
      return JSON.stringify({ protected: parts[0], payload: parts[1], signature: parts[2] });
    default:
      throw new Error(`unknown transform "${transform}": teach this test how to apply it`);
  }
}

async function makeToken(vector: TokenVector): Promise<string> {
  if (vector.token !== undefined) return vector.token;
  // Right before the token is sent, so that "$now" is the server's now too.
  const now = Math.floor(Date.now() / 1000);
  const header = vector.header === undefined ? undefined : (substitute(vector.header, now) as Record<string, Json>);
  const payload = vector.payload === undefined ? undefined : (substitute(vector.payload, now) as Record<string, Json>);
  const payloadText = vector.payloadRaw !== undefined ? substituteText(vector.payloadRaw, now) : JSON.stringify(payload);
  const payloadBytes = Buffer.from(payloadText, vector.payloadEncoding ?? "utf8");
  const key = new TextEncoder().encode(SECRET);

  let token: string;
  if (vector.via === "jose.SignJWT") {
    token = await new SignJWT(payload as Record<string, unknown>).setProtectedHeader(header as { alg: string }).sign(key);
  } else {
    const headerSegment = vector.headerRaw !== undefined ? b64url(substituteText(vector.headerRaw, now)) : b64url(JSON.stringify(header));
    if (vector.unencodedPayload) {
      // RFC 7797: the signing input holds the payload as it is, and the compact form
      // detaches it (its dots would otherwise split the token).
      token = `${headerSegment}..${signature(vector.sig, `${headerSegment}.${payloadText}`)}`;
    } else {
      const data = `${headerSegment}.${b64url(payloadBytes)}`;
      token = `${data}.${signature(vector.sig, data)}`;
      if ((vector.sig ?? "HS256") === "HS256" && header?.alg === "HS256" && vector.headerRaw === undefined) {
        // A well-formed HS256 token: jose's CompactSign must produce the very same bytes,
        // which checks this hand assembly against an independent implementation. Headers
        // jose refuses to sign (crit it does not know, ...) keep the hand-made token.
        const byJose = await new CompactSign(payloadBytes)
          .setProtectedHeader(header as { alg: string })
          .sign(key)
          .catch(() => null);
        if (byJose !== null) expect(byJose).toBe(token);
      }
    }
  }
  for (const transform of vector.transform ?? []) token = applyTransform(token, transform, now);
  return token;
}

/** The Authorization header value, or null for none. */
function authorization(vector: TokenVector, token: string): string | null {
  if (vector.authorization === null) return null;
  if (vector.authorization !== undefined) return vector.authorization.replaceAll("{token}", token);
  return `Bearer ${token}`;
}

// ---- The server ----

let upstream: TestUpstream;
let app: TestServer;
let viewer: Viewer;

beforeAll(async () => {
  upstream = await new TestUpstream().start();
  const alias = (jwt: Record<string, unknown>) => ({ baseUrl: upstream.origin, auth: { enabled: true, verifiers: ["jwt"], jwt } });
  app = await startServer({
    root: tempApp(),
    config: {
      server: {
        auth: { jwt: { secret: SECRET } },
        secure: {
          proxies: {
            strict: alias({ issuer: FILE.iss, audience: FILE.aud, clockSkewSec: 0 }),
            loose: alias({ clockSkewSec: 30 }),
          },
        },
      },
    },
  });
  viewer = await openViewer(app.url);
});

afterAll(async () => {
  await app?.close();
  await upstream?.close();
});

interface Answer {
  status: number;
  code: unknown;
  forwarded: boolean;
}

async function sendVector(vector: TokenVector): Promise<Answer> {
  // A vector whose Authorization is fixed (none at all, "Bearer " alone) has no token to make.
  const needsToken = vector.authorization === undefined || (vector.authorization?.includes("{token}") ?? false);
  const token = needsToken ? await makeToken(vector) : "";
  const value = authorization(vector, token);
  const before = upstream.find("/echo").length;
  const answer = await send(app.url, `/proxy/${vector.proxy}/echo`, { viewer, headers: value === null ? {} : { authorization: value } });
  return { status: answer.status, code: answer.json?.code, forwarded: upstream.find("/echo").length > before };
}

const FORWARDED: Answer = { status: 200, code: undefined, forwarded: true };
const REFUSED: Answer = { status: 401, code: "PROXY_AUTH_FAILED", forwarded: false };

const titled = (expectation: TokenVector["expect"]) =>
  FILE.vectors.filter((vector) => vector.expect === expectation).map((vector) => ({ ...vector, title: `${vector.id} (${vector.proxy}) ${vector.case}` }));

const eitherOutcomes: string[] = [];
afterAll(() => {
  if (eitherOutcomes.length > 0) console.log(`JWT "either" vectors (not counted):\n  ${eitherOutcomes.join("\n  ")}`);
});

describe("JWT vectors through the proxy", () => {
  it("has the cases the file promises", () => {
    expect(FILE.vectors.length).toBeGreaterThanOrEqual(132);
    expect(FILE.vectors.every((vector) => [200, 401, "either"].includes(vector.expect))).toBe(true);
  });

  it.each(titled(200))("forwards $title", async (vector) => {
    expect(await sendVector(vector), vector.note ?? vector.source).toEqual(FORWARDED);
  });

  it.each(titled(401))("refuses $title", async (vector) => {
    expect(await sendVector(vector), vector.note ?? vector.source).toEqual(REFUSED);
  });

  // it.for, not it.each: it hands the test context (and its annotate) to the callback.
  it.for(titled("either"))("reports $title (either is acceptable)", async (vector, { annotate }) => {
    const answer = await sendVector(vector);
    expect([FORWARDED, REFUSED]).toContainEqual(answer);
    const shown = answer.status === 200 ? "forwarded (200)" : "refused (401)";
    eitherOutcomes.push(`${vector.id} ${vector.case}: ${shown}`);
    await annotate(`outcome: ${shown}`);
  });
});

describe("JWT startup vectors", () => {
  it.each(FILE.startup.map((vector) => ({ ...vector, title: `${vector.id} ${vector.case}` })))("$title", async (vector) => {
    const root = tempApp({ config: { server: { auth: { jwt: vector.config } } } });
    const result = await runToExit(["--root", root, "--port", "0"], { APP_SESSION_SECRET: TEST_SESSION_SECRET });
    expect(result.code).toBe(vector.expect.exitCode);
    expect(result.stderr).toContain(vector.expect.stderrMentions);
    expect(result.stdout).not.toContain("listening on");
  });
});
