// federator dashboard: live fragments over server-sent events. The page
// works without this script (every cell is a link); with it, the server's
// change events re-fetch only the sections they name, a cell opens in
// place, and a dropped stream says so until it is back.
(function () {
  "use strict";
  var live = document.getElementById("live");
  var inflight = {};

  function say(state, text) {
    live.dataset.state = state;
    live.textContent = text;
  }

  function refresh(name) {
    var section = document.getElementById(name);
    if (!section || !section.dataset.fragment) return;
    if (inflight[name]) { inflight[name].again = true; return; }
    inflight[name] = { again: false };
    fetch(section.dataset.fragment, { headers: { Accept: "text/html" } })
      .then(function (r) { return r.ok ? r.text() : Promise.reject(r.status); })
      .then(function (html) {
        var focused = document.activeElement && document.activeElement.closest("#" + name) ? keyOf(document.activeElement) : null;
        section.innerHTML = html;
        markOpen();
        if (focused) restoreFocus(section, focused);
        var asof = document.getElementById("asof");
        if (asof) { var now = new Date().toISOString(); asof.textContent = now; asof.setAttribute("datetime", now); }
      })
      .catch(function () { /* the next event or reconnect fetches again */ })
      .finally(function () {
        var again = inflight[name].again;
        delete inflight[name];
        if (again) refresh(name);
      });
  }

  function keyOf(el) {
    return el.dataset && el.dataset.cell ? el.dataset.cell + "|" + el.dataset.cluster : null;
  }
  function restoreFocus(section, key) {
    var parts = key.split("|");
    var el = section.querySelector('a.cell[data-cell="' + CSS.escape(parts[0]) + '"][data-cluster="' + CSS.escape(parts[1]) + '"]');
    if (el) el.focus();
  }

  function markOpen() {
    var detail = document.getElementById("detail");
    var src = detail.dataset.fragment || "";
    document.querySelectorAll("a.cell.open").forEach(function (a) { a.classList.remove("open"); });
    if (!src) return;
    var q = new URLSearchParams(src.split("?")[1] || "");
    document.querySelectorAll("a.cell").forEach(function (a) {
      if (a.dataset.cell === q.get("cell") && a.dataset.cluster === q.get("cluster")) a.classList.add("open");
    });
  }

  // Opening a cell loads its detail in place and keeps it live.
  document.addEventListener("click", function (e) {
    var a = e.target.closest("a.cell");
    var detail = document.getElementById("detail");
    if (a) {
      if (e.ctrlKey || e.metaKey || e.shiftKey) return;
      e.preventDefault();
      detail.dataset.fragment = "/fragment/detail?" + new URLSearchParams({ cell: a.dataset.cell, cluster: a.dataset.cluster });
      history.replaceState(null, "", a.getAttribute("href"));
      refresh("detail");
      detail.scrollIntoView({ block: "nearest" });
      return;
    }
    if (e.target.closest("[data-close]")) {
      e.preventDefault();
      delete detail.dataset.fragment;
      var u = new URL(location.href);
      u.searchParams.delete("cell"); u.searchParams.delete("cluster");
      history.replaceState(null, "", u);
      detail.innerHTML = '<p class="hint">Open a cell of the grid to see why it is in its state.</p>';
      markOpen();
    }
  });

  if (!window.EventSource) { say("lost", "no live updates in this browser: reload to refresh"); return; }
  var lostOnce = false;
  function connect() {
    var es = new EventSource("/events");
    es.addEventListener("hello", function () {
      say("live", "live");
      // Whatever changed while the stream was down is fetched again.
      if (lostOnce) ["grid", "detail", "rollouts", "gates", "deletions", "clusters"].forEach(refresh);
    });
    es.addEventListener("change", function (e) {
      e.data.split(" ").forEach(refresh);
    });
    es.onerror = function () {
      lostOnce = true;
      say("lost", "connection lost, reconnecting…");
      if (es.readyState === EventSource.CLOSED) { setTimeout(connect, 2000); }
    };
  }
  markOpen();
  connect();
  // Soak time left, gate windows and countdowns move with the clock, not
  // only with the hub: those parts are fetched again every 30 seconds.
  setInterval(function () {
    if (live.dataset.state === "live") ["rollouts", "gates", "deletions"].forEach(refresh);
  }, 30000);
})();
