// @ts-check
// The page's calls. The server injects the browser client into every page it serves:
// window.xserver calls server methods with the session cookie and CSRF token. With
// counterpart-env.d.ts (npm run check writes it) each call is type-checked against the
// method's own input and result.
const answer = element("answer", HTMLOutputElement);
const nameInput = element("name", HTMLInputElement);

/**
 * @template {HTMLElement} T
 * @param {string} id
 * @param {new () => T} type
 * @returns {T}
 */
function element(id, type) {
  const found = document.getElementById(id);
  if (!(found instanceof type)) throw new Error(`#${id} is missing from the page`);
  return found;
}

/** @param {() => Promise<unknown>} call */
async function show(call) {
  try {
    answer.textContent = JSON.stringify(await call());
  } catch (error) {
    const { code, message } = /** @type {{ code?: string; message?: string }} */ (error);
    answer.textContent = `${code ?? "ERROR"}: ${message}`;
  }
}

element("greet", HTMLButtonElement).addEventListener("click", () => show(() => window.xserver.plugin.hello.greet({ name: nameInput.value })));
element("visit", HTMLButtonElement).addEventListener("click", () => show(() => window.xserver.plugin.hello.visit()));
