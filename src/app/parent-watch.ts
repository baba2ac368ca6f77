/**
 * `npx counterpart` and `npm start` run the server as npm → `sh -c` → node. A SIGTERM sent
 * to npm (a process manager that signals only the pid it started, `kill <pid>`, a test
 * harness) is forwarded to the shell, which dies of it without passing it on, and the
 * server was left running with no parent. So under npm the server watches its parent: once
 * it is gone, it shuts down as on SIGTERM. (Ctrl-C in a terminal reaches every process of
 * the group, the server included, and needs none of this.)
 */

const CHECK_EVERY_MS = 500;

/** Calls `onGone` once when the parent process ends; only when npm started us (`npm_command` is set). */
export function whenParentGone(env: NodeJS.ProcessEnv, onGone: () => void): void {
  if (env.npm_command === undefined) return;
  const parent = process.ppid;
  const timer = setInterval(() => {
    if (process.ppid === parent) return;
    clearInterval(timer);
    onGone();
  }, CHECK_EVERY_MS);
  // Never what keeps the process alive.
  timer.unref();
}
