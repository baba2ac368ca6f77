// The dev console: status, methods and live logs, through window.xserver.server.core only.
// Every value shown comes from the server and may hold what a caller typed (method names,
// log text), so it is set with textContent, never as HTML.
(function () {
  "use strict";
  var STATUS_EVERY_MS = 3000;
  var LOGS_EVERY_MS = 1000;
  var LOG_PAGE = 200;
  var MAX_LOG_ROWS = 1000;
  var LEVELS = { trace: 10, debug: 20, info: 30, warn: 40, error: 50, fatal: 60 };
  var SKIP_FIELDS = { id: 1, time: 1, timestamp: 1, level: 1, msg: 1, message: 1, pid: 1, hostname: 1 };
  var afterId = 0;

  function $(id) { return document.getElementById(id); }

  function el(tag, text, className) {
    var node = document.createElement(tag);
    if (text !== undefined && text !== null) node.textContent = String(text);
    if (className) node.className = className;
    return node;
  }

  function row(cells) {
    var tr = document.createElement("tr");
    cells.forEach(function (cell) {
      var td = cell instanceof Node ? cell : el("td", cell);
      tr.appendChild(td);
    });
    return tr;
  }

  function badges(entries) {
    var td = el("td");
    entries.forEach(function (entry) { td.appendChild(el("span", entry.text, "badge " + (entry.className || ""))); });
    if (entries.length === 0) td.textContent = "—";
    return td;
  }

  function duration(sec) {
    if (typeof sec !== "number") return "—";
    if (sec < 120) return sec + " s";
    if (sec < 7200) return Math.round(sec / 60) + " min";
    return (sec / 3600).toFixed(1) + " h";
  }

  function megabytes(bytes) { return typeof bytes === "number" ? (bytes / 1048576).toFixed(1) + " MB" : "—"; }

  function showError(error) {
    var box = $("error");
    if (!error) { box.hidden = true; box.textContent = ""; return; }
    box.hidden = false;
    box.textContent = (error.code ? error.code + ": " : "") + (error.message || String(error));
  }

  function renderWorkers(workers) {
    var body = $("workers");
    body.textContent = "";
    (workers || []).forEach(function (w) {
      var queues = Object.keys(w.queues || {}).map(function (key) {
        var q = w.queues[key];
        return { text: key + " " + q.active + "/" + q.maxConcurrency + " +" + q.queued };
      });
      var breakers = Object.keys(w.breakers || {}).map(function (key) {
        var b = w.breakers[key];
        return { text: key + " " + b.state + " (" + b.failures + "/" + b.failureThreshold + ")", className: b.state };
      });
      var pool = w.isolation ? w.isolation.threads + " threads, " + w.isolation.queued + " queued" : "—";
      var inFlight = w.inFlight ? w.inFlight.requests + " (" + w.inFlight.rpc + ")" : "—";
      var tr = row([String(w.pid), w.error ? "no answer" : (w.state || "ready"), duration(w.uptimeSec), inFlight,
        megabytes(w.memory && w.memory.rss), badges(queues), badges(breakers), pool]);
      tr.setAttribute("data-pid", String(w.pid));
      body.appendChild(tr);
    });
  }

  function access(policy) {
    if (policy.public === true) return "public";
    if (policy.public === "function") return "public (function)";
    return policy.requireSession === false ? "verifiers only" : "session";
  }

  function renderMethods(registry) {
    var body = $("methods");
    body.textContent = "";
    (registry || []).forEach(function (target) {
      target.methods.forEach(function (m) {
        var p = m.policy || {};
        var breaker = p.circuitBreaker ? p.circuitBreaker.key + " (" + p.circuitBreaker.failureThreshold + " / " + p.circuitBreaker.resetAfterMs + " ms)" : "—";
        var limit = p.maxConcurrency !== undefined ? p.maxConcurrency + " / " + p.queueLimit + (p.concurrencyScope === "deployment" ? " (deployment)" : "") : "—";
        var name = el("td", target.kind + "/" + target.id + "/" + m.name, "target");
        var tr = row([name, access(p), p.timeoutMs + " ms", p.maxBodyBytes + " B", limit, p.isolation || "none", breaker]);
        tr.setAttribute("data-method", target.kind + "/" + target.id + "/" + m.name);
        body.appendChild(tr);
      });
    });
  }

  function refreshStatus() {
    return window.xserver.server.core.getStatus().then(function (status) {
      $("mode").textContent = status.mode === "cluster" ? "cluster, " + status.workers.length + " workers" : "single process";
      $("version").textContent = status.version;
      $("node").textContent = status.node;
      $("pid").textContent = "pid " + status.pid;
      $("uptime").textContent = duration(status.uptimeSec);
      renderWorkers(status.workers);
      renderMethods(status.registry);
      showError(null);
    }, showError);
  }

  function extraFields(entry) {
    var parts = [];
    Object.keys(entry).forEach(function (key) {
      if (SKIP_FIELDS[key]) return;
      var value = entry[key];
      parts.push(key + "=" + (typeof value === "object" ? JSON.stringify(value) : String(value)));
    });
    return parts.join(" ");
  }

  // The console's polling logs one rpc.complete per call, like every call; hidden by default
  // so that the log does not fill with its own reading of it.
  function isOwnCall(entry) {
    return entry.kind === "server" && entry.event === "rpc.complete";
  }

  function appendLogs(entries) {
    var list = $("logs");
    var min = Number($("level").value);
    var ownCalls = $("own-calls").checked;
    var atBottom = list.scrollTop + list.clientHeight >= list.scrollHeight - 4;
    entries.forEach(function (entry) {
      if ((LEVELS[entry.level] || 30) < min) return;
      if (!ownCalls && isOwnCall(entry)) return;
      var li = el("li", null, "level-" + entry.level);
      li.setAttribute("data-id", String(entry.id));
      li.appendChild(el("span", "#" + entry.id + " " + clock(entry.time) + " " + entry.level + " pid " + entry.pid + " ", "meta"));
      li.appendChild(el("span", entry.msg, "msg"));
      var extra = extraFields(entry);
      if (extra) li.appendChild(el("span", " " + extra, "meta"));
      list.appendChild(li);
    });
    while (list.childNodes.length > MAX_LOG_ROWS) list.removeChild(list.firstChild);
    $("log-count").textContent = "(last id " + afterId + ")";
    if (atBottom) list.scrollTop = list.scrollHeight;
  }

  function clock(time) {
    var date = new Date(time);
    return isNaN(date.getTime()) ? "--:--:--.---" : date.toISOString().slice(11, 23);
  }

  function pollLogs() {
    if ($("pause").checked) return setTimeout(pollLogs, LOGS_EVERY_MS);
    var next = LOGS_EVERY_MS * 3;
    window.xserver.server.core.getLogs({ afterId: afterId, limit: LOG_PAGE }).then(function (page) {
      afterId = page.nextAfterId;
      // More are waiting: fetch them now rather than after the pause.
      next = page.hasMore ? 0 : LOGS_EVERY_MS;
      appendLogs(page.entries);
    }).catch(showError).then(function () {
      // Whatever happened above, polling goes on.
      setTimeout(pollLogs, next);
    });
  }

  function start() {
    if (!window.xserver || !window.xserver.server) {
      showError(new Error("window.xserver is missing: /__app/client.js did not load"));
      return;
    }
    $("clear").addEventListener("click", function () { $("logs").textContent = ""; });
    refreshStatus();
    setInterval(refreshStatus, STATUS_EVERY_MS);
    pollLogs();
  }

  start();
})();
