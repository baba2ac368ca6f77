// The demo viewer's calls. Everything goes through the browser client that the server
// injects into every page (/__app/client.js): window.xserver for server methods,
// HttpClient for the proxy, AppUser for secrets.
const { xserver, HttpClient, AppUser } = window;

// The partner verifier wants an X-Demo-Key header: a client with a custom auth handler adds it.
AppUser.setSecret("demo-partner-key", "demoKey", "partner");
const partnerClient = new HttpClient({
  auth: { contextId: "partner", types: ["demoKey"], handlers: { demoKey: ({ secret }) => ({ "X-Demo-Key": secret }) } },
});

// The two proxy aliases of app.config.json: an API key added by the server only, and an
// API key plus the viewer's JWT.
const apiClient = new HttpClient({ proxy: "demo-api" });
const secureClient = new HttpClient({
  proxy: "demo-secure",
  auth: { contextId: "demo-secure", types: ["jwt"], required: true },
});

// A login-like flow: when the secure upstream answers 401, the client raises
// requestSecretUpdate; this "login client" fetches a fresh token and stores it, and the
// client replays the request once with it.
async function logIn(user = "ada") {
  const { token } = await xserver.module["upstream-demo"].issueDemoToken({ user });
  AppUser.setSecret(token, "jwt", "demo-secure");
  return { loggedInAs: user };
}
// What the handler did, for the page to show: a refresh is otherwise invisible.
const refreshes = [];
AppUser.addHandler("requestSecretUpdate", ({ type, contextId }) => {
  if (type !== "jwt" || contextId !== "demo-secure") return;
  refreshes.push("401 from demo-secure: requestSecretUpdate asked for a new jwt");
  void logIn().then(({ loggedInAs }) => refreshes.push(`logged in again as ${loggedInAs}: new token stored in AppUser, request replayed`));
});

const calls = [
  { title: "greeter.ping — plugin, public", run: () => xserver.plugin.greeter.ping() },
  { title: "greeter.greet — plugin, TypeScript, session-only", run: () => xserver.plugin.greeter.greet({ name: "Ada" }) },
  {
    title: "greeter.tell — streaming: the words arrive as the server writes them",
    // $stream calls answer { events, result, abort }: events as they come, then the result.
    stream: () => xserver.plugin.greeter.$stream.tell({ delayMs: 120 }),
  },
  {
    title: "greeter.countLines — upload: a file you pick (or a made-up one), hashed as it streams",
    file: true,
    // A Blob or File anywhere in the input makes the call multipart; the method gets an UploadedFile.
    run: (picked) => xserver.plugin.greeter.countLines({ file: picked ?? new File(["one\ntwo\nthree\n"], "made-up.txt", { type: "text/plain" }) }),
  },
  // A method returning APP_SERVER.file(…) answers a Blob.
  { title: "greeter.exportReport — download: a text report", run: () => xserver.plugin.greeter.exportReport({ title: "Demo report" }) },
  { title: "clock.now — module, public", run: () => xserver.module.clock.now() },
  { title: "clock.whoami — module, session-only", run: () => xserver.module.clock.whoami() },
  {
    title: "clock.partnerReport — verifier-only, without the key: refused",
    run: () => xserver.module.clock.partnerReport({ days: 3 }, { contextId: "partner" }),
  },
  {
    title: "clock.partnerReport — verifier-only, with X-Demo-Key from its own client",
    run: () => xserver.module.clock.partnerReport({ days: 3 }, { contextId: "partner", client: partnerClient }),
  },
  { title: "proxy demo-api — the server adds the API key", run: () => apiClient.get("hello", { query: { tag: ["a", "b"] } }) },
  { title: "proxy demo-secure — log in (stores a JWT in AppUser)", run: () => logIn() },
  { title: "proxy demo-secure — call with the JWT", run: () => secureClient.get("me") },
  {
    title: "proxy demo-secure — spoil the token, then call: 401, refresh, replay",
    run: async () => {
      AppUser.setSecret("not-a-valid-token", "jwt", "demo-secure");
      refreshes.length = 0;
      const answer = await secureClient.get("me");
      return { refresh: refreshes.length > 0 ? [...refreshes] : ["none: the stored token was accepted"], answer };
    },
  },
];

const section = document.getElementById("calls");
for (const spec of calls) {
  const box = document.createElement("div");
  box.className = "call";
  box.innerHTML = `<h2></h2><button type="button">Call</button><pre></pre>`;
  box.querySelector("h2").textContent = spec.title;
  const out = box.querySelector("pre");
  const picker = spec.file ? document.createElement("input") : null;
  if (picker) {
    picker.type = "file";
    box.querySelector("button").before(picker);
  }
  box.querySelector("button").addEventListener("click", async () => {
    out.className = "";
    out.textContent = "…";
    try {
      if (spec.stream) {
        const { events, result } = spec.stream();
        let words = "";
        for await (const event of events) {
          words += (words ? " " : "") + event.word;
          out.textContent = words;
        }
        out.textContent = `${words}\n\nresult: ${JSON.stringify(await result, null, 2)}`;
      } else {
        const answer = await spec.run(picker?.files?.[0]);
        if (answer instanceof Blob) {
          out.textContent = `${answer.type}, ${answer.size} bytes\n\n${await answer.text()}`;
          const link = document.createElement("a");
          link.href = URL.createObjectURL(answer);
          link.download = "report.txt";
          link.textContent = "Save it";
          out.append(document.createElement("br"), link);
        } else {
          out.textContent = JSON.stringify(answer, null, 2);
        }
      }
    } catch (error) {
      out.className = "error";
      out.textContent = `${error.status ?? ""} ${error.code ?? error.name}: ${error.message}`;
    }
  });
  section.append(box);
}
