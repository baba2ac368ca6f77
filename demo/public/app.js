// The demo page's calls. Each goes through window.xserver (from /__app/client.js) when it
// is there, and through plain fetch with the X-APP-CSRF header otherwise.
const calls = [
  { title: "greeter.ping (plugin, public)", kind: "plugin", id: "greeter", method: "ping" },
  { title: "greeter.greet (plugin, TypeScript, session-only)", kind: "plugin", id: "greeter", method: "greet", input: { name: "Ada" } },
  { title: "clock.now (module, public)", kind: "module", id: "clock", method: "now" },
  { title: "clock.whoami (module, session-only)", kind: "module", id: "clock", method: "whoami" },
  {
    title: "clock.partnerReport (module, verifier-only, no key: refused)",
    kind: "module", id: "clock", method: "partnerReport", input: { days: 3 }, contextId: "partner",
  },
  {
    title: "clock.partnerReport (module, verifier-only, with X-Demo-Key)",
    kind: "module", id: "clock", method: "partnerReport", input: { days: 3 }, contextId: "partner",
    headers: { "X-Demo-Key": "demo-partner-key" },
  },
];

async function call({ kind, id, method, input, contextId, headers }) {
  const response = await fetch(`/__rpc/${kind}/${encodeURIComponent(id)}/${encodeURIComponent(method)}`, {
    method: "POST",
    credentials: "same-origin",
    headers: { "content-type": "application/json", "X-APP-CSRF": window.APP_CSRF_TOKEN ?? "", ...headers },
    body: JSON.stringify({ args: input === undefined ? [] : [input], contextId }),
  });
  const body = await response.json();
  if (!response.ok) throw Object.assign(new Error(body.error), { status: response.status, code: body.code });
  return body.result;
}

const section = document.getElementById("calls");
for (const spec of calls) {
  const box = document.createElement("div");
  box.className = "call";
  box.innerHTML = `<h2></h2><button type="button">Call</button><pre></pre>`;
  box.querySelector("h2").textContent = spec.title;
  const out = box.querySelector("pre");
  box.querySelector("button").addEventListener("click", async () => {
    out.className = "";
    out.textContent = "…";
    try {
      out.textContent = JSON.stringify(await call(spec), null, 2);
    } catch (error) {
      out.className = "error";
      out.textContent = `${error.status} ${error.code}: ${error.message}`;
    }
  });
  section.append(box);
}
