// docs/reference/configuration.md: an unknown key's "did you mean" names a key only when it is near
// enough to be the one meant (an edit distance of a third of the name), counting a swap of
// two neighbouring letters as one typo.
import { describe, expect, it } from "vitest";
import { closest, editDistance } from "../../dist/config/did-you-mean.js";

describe("did you mean", () => {
  it("counts insertions, deletions, substitutions and neighbour swaps as one edit each", () => {
    expect(editDistance("sesion", "session")).toBe(1);
    expect(editDistance("sessoin", "session")).toBe(1);
    expect(editDistance("timeout", "timeoutMs")).toBe(2);
    expect(editDistance("port", "host")).toBe(2);
    expect(editDistance("", "abc")).toBe(3);
  });

  it("suggests the nearest candidate when it is near, ignoring case, and nothing otherwise", () => {
    const keys = ["allowedOrigins", "trustProxy", "session", "shutdownTimeoutMs", "rpc"];
    expect(closest("sesion", keys)).toBe("session");
    expect(closest("TrustProxy", keys)).toBe("trustProxy");
    expect(closest("allowedOrigin", keys)).toBe("allowedOrigins");
    expect(closest("rcp", keys)).toBe("rpc");
    expect(closest("port", ["host"])).toBeUndefined();
    expect(closest("completelyDifferent", keys)).toBeUndefined();
    expect(closest("session", keys)).toBeUndefined();
  });
});
