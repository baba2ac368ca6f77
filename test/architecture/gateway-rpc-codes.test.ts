/**
 * docs/guides/toolkit.md "Typed calls: counterpart types": a call's error `code` is typed as the method's
 * declared codes plus the gateway's own. The browser's list of the gateway's codes is
 * written out by hand (src/client imports nothing of the server), so it must follow the
 * server's table: every RPC_ code, and the other codes an RPC call can be answered with.
 */
import { readFileSync } from "node:fs";
import { expect, it } from "vitest";
import { ERROR_CODES } from "../../src/errors/codes.js";

/** Codes outside RPC_ that reach a call: the session store's, shutting down, the error handler's fallbacks. */
const ALSO_ON_A_CALL = ["SESSION_DATA_TOO_LARGE", "SESSION_STORE_UNAVAILABLE", "SERVICE_UNAVAILABLE", "BAD_REQUEST", "INTERNAL_ERROR"];

it("lists in the browser's GatewayRpcCode exactly the gateway's codes a call can get", () => {
  const source = readFileSync(new URL("../../src/client/rpc-errors.ts", import.meta.url), "utf8");
  const union = /export type GatewayRpcCode =([\s\S]*?);/.exec(source)?.[1] ?? "";
  const browser = [...union.matchAll(/\| "([A-Z0-9_]+)"/g)].map((match) => match[1]).sort();
  const server = Object.keys(ERROR_CODES).filter((code) => code.startsWith("RPC_") || ALSO_ON_A_CALL.includes(code)).sort();
  expect(server).toHaveLength(Object.keys(ERROR_CODES).filter((code) => code.startsWith("RPC_")).length + ALSO_ON_A_CALL.length);
  expect(browser).toEqual(server);
  expect(union).toContain("`HTTP_${number}`");
});
