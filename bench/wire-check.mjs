// Before a contender of the rpc section is measured, one real call in its own wire format:
// the echoed value must come back, and a call without the session cookie or without the
// CSRF header must be refused (401 or 403). A contender that answers something else would
// be measured doing other work than the gateway (a 404 is cheaper than an echo), so the
// bench stops with what was expected and what came back.
import { isDeepStrictEqual } from "node:util";
import { viewerSession } from "./lib.mjs";

/**
 * Throws unless `server` echoes through `path`. `wire.body`: the request body in the
 * contender's format; `wire.echoed(json)`: where its answer carries the echoed value;
 * `value`: what `wire.body` sends.
 */
export async function checkWire(name, server, path, wire, value) {
  const session = await viewerSession(server.url);
  const call = async (headers) => {
    try {
      const response = await fetch(server.url + path, { method: "POST", headers: { "content-type": "application/json", ...headers }, body: wire.body });
      return { status: response.status, text: await response.text() };
    } catch (error) {
      throw new Error(`rpc bench: ${name} (POST ${path}) did not answer (${error.cause?.message ?? error.message}): the server may have crashed on a body it did not expect.`);
    }
  };
  const fail = (what, answer) => {
    throw new Error(`rpc bench: ${name} (POST ${path}) ${what}; got ${answer.status} ${answer.text.slice(0, 200)}. Its wire format in bench/rpc.mjs no longer matches the server: fix it before measuring.`);
  };

  const echo = await call({ cookie: session.cookie, "x-app-csrf": session.csrf });
  let echoed;
  try {
    echoed = wire.echoed(JSON.parse(echo.text));
  } catch {
    // Not JSON, or not the expected shape: reported below with the answer.
  }
  if (echo.status !== 200 || !isDeepStrictEqual(echoed, value)) fail(`should echo ${JSON.stringify(value)} with 200`, echo);

  const refused = (answer) => answer.status === 401 || answer.status === 403;
  const noCookie = await call({ "x-app-csrf": session.csrf });
  if (!refused(noCookie)) fail("should refuse a call without the session cookie (401 or 403)", noCookie);
  const noCsrf = await call({ cookie: session.cookie });
  if (!refused(noCsrf)) fail("should refuse a call without the CSRF header (401 or 403)", noCsrf);
}
