// docs/guides/server-methods.md "Exposing a method: authentication": the gateway reads one cookie, app_session, by name.
import { describe, expect, it } from "vitest";
import { readSessionCookie } from "../../src/auth/session-cookie.js";

describe("readSessionCookie", () => {
  it("finds app_session among other cookies, and only it", () => {
    expect(readSessionCookie({ cookie: "theme=dark; app_session=v1.abc.123.mac; lang=en" })).toBe("v1.abc.123.mac");
    expect(readSessionCookie({ cookie: "my_app_session=x; app_session2=y" })).toBeUndefined();
    expect(readSessionCookie({})).toBeUndefined();
  });

  it("takes a value in double quotes without them, and leaves any other quote alone", () => {
    expect(readSessionCookie({ cookie: 'app_session="v1.abc.123.mac"' })).toBe("v1.abc.123.mac");
    expect(readSessionCookie({ cookie: 'app_session="' })).toBe('"');
    expect(readSessionCookie({ cookie: 'app_session=""' })).toBe("");
    expect(readSessionCookie({ cookie: 'app_session="v1.abc' })).toBe('"v1.abc');
  });
});
