// The page's calls. The server injects the browser client into every page it serves:
// window.xserver calls server methods with the session cookie and CSRF token.
const answer = document.getElementById("answer");

async function show(call) {
  try {
    answer.textContent = JSON.stringify(await call());
  } catch (error) {
    answer.textContent = `${error.code ?? "ERROR"}: ${error.message}`;
  }
}

document.getElementById("greet").addEventListener("click", () =>
  show(() => window.xserver.plugin.hello.greet({ name: document.getElementById("name").value })),
);
document.getElementById("visit").addEventListener("click", () => show(() => window.xserver.plugin.hello.visit()));
