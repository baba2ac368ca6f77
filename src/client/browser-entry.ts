/**
 * /__app/client.js: installs the browser library on `window` for pages without a bundler
 * (docs/guides/browser.md "Calling the server from the browser"). `window.AppUser` is the page's secret
 * store instance, as pages use it (`AppUser.setSecret(...)`); the class is
 * `window.AppUserStore`. TimeoutError, ResponseParseError and StreamError are not made
 * globals (a page may have its own names); tell them apart by `err.name` or `err.code`,
 * or import them from the ESM entry.
 */
import { AppElement } from "./app-element.js";
import { AppUser, appUser } from "./app-user.js";
import { HttpError } from "./errors.js";
import { HttpClient } from "./http-client.js";
import type { SessionRecovery } from "./types.js";
import { createXServer, type XServer } from "./xserver.js";

declare global {
  interface Window {
    APP_CSRF_TOKEN?: string;
    HttpClient: typeof HttpClient;
    HttpError: typeof HttpError;
    AppUser: AppUser;
    AppUserStore: typeof AppUser;
    AppElement: typeof AppElement;
    xserver: XServer;
    /** Set by the page, read at each failed call (docs/guides/browser.md "Session recovery"). */
    AppSessionRecovery?: SessionRecovery;
  }
}

const globals: Record<string, unknown> = {
  HttpClient,
  HttpError,
  AppUser: appUser,
  AppUserStore: AppUser,
  AppElement,
  xserver: existingXServer() ?? createXServer(),
};

for (const [name, value] of Object.entries(globals)) {
  Object.defineProperty(window, name, { value, configurable: true, enumerable: false, writable: true });
}

/**
 * Loading the script twice keeps the first xserver, whose transport the page may have
 * replaced. The check is by shape: an element with id="xserver" is also `window.xserver`.
 */
function existingXServer(): XServer | undefined {
  const existing = (window as Partial<Window>).xserver;
  return typeof existing?.setHttpClient === "function" ? existing : undefined;
}
