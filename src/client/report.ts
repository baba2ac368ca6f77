/**
 * Reports an error thrown by page code the library called (an event handler, the
 * session-recovery hook) the way an uncaught error is reported, without letting it
 * change what the library itself does next.
 */
export function reportError(error: unknown): void {
  const report = (globalThis as { reportError?: (error: unknown) => void }).reportError;
  if (typeof report === "function") report(error);
  else console.error(error);
}
