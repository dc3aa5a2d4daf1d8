// Atoll live pages: sections re-fetched in place when the change stream
// (GET /api/v1/changes, Server-Sent Events) says they changed, and the job
// log followed over its websocket. Plain JavaScript, no build step; pages
// are complete without it. Log text only ever reaches the DOM through
// textContent: never as markup.
"use strict";

(function () {
	// ---- Sections: [data-live-topics] with hx-get and hx-trigger="atoll:changed".
	// data-live-topics lists the change topics that concern the section;
	// data-live-job, data-live-repo and data-live-pull narrow it to one job
	// or pull request (the pull request page's sections and its command
	// notices name theirs). A change with topic "" (the stream fell behind) or
	// "node" (this node's role changed, or a standby's copy moved on)
	// concerns every section.

	var DEBOUNCE_MS = 400;
	var pending = new WeakMap();

	function sections() {
		return Array.prototype.slice.call(document.querySelectorAll("[data-live-topics]"));
	}

	function concerns(el, c) {
		if (!c.topic || c.topic === "node") return true;
		var topics = (el.getAttribute("data-live-topics") || "").split(/\s+/);
		if (topics.indexOf(c.topic) < 0) return false;
		var job = el.getAttribute("data-live-job");
		if (job && c.job_id && String(c.job_id) !== job) return false;
		var repo = el.getAttribute("data-live-repo");
		if (repo && c.repo && c.repo !== repo) return false;
		var pull = el.getAttribute("data-live-pull");
		if (pull && c.pull && String(c.pull) !== pull) return false;
		return true;
	}

	// editing reports whether the user is typing in el (a reason for an
	// approval, say) or selecting text: el is not swapped under them.
	function editing(el) {
		var a = document.activeElement;
		if (a && el.contains(a) && (a.tagName === "TEXTAREA" || a.tagName === "INPUT") && a.value) return true;
		var sel = window.getSelection && window.getSelection();
		return !!(sel && !sel.isCollapsed && sel.anchorNode && el.contains(sel.anchorNode));
	}

	// pressed is the element a press (mouse, pen or touch) began on, until
	// the click it makes has been dispatched: a section is not swapped
	// under a press, or the click would land on a button no longer in the
	// page and be lost.
	var pressed = null;
	document.addEventListener("pointerdown", function (e) { pressed = e.target; }, true);
	function unpress() { setTimeout(function () { pressed = null; }, 0); }
	document.addEventListener("pointerup", unpress, true);
	document.addEventListener("pointercancel", unpress, true);
	function pressing(el) { return !!(pressed && el.contains(pressed)); }

	// A section's answer that arrives during a press in it is dropped and
	// asked for again once the press is over.
	document.addEventListener("htmx:beforeSwap", function (e) {
		var el = e.detail.target;
		if (el && el.hasAttribute && el.hasAttribute("data-live-topics") && pressing(el)) {
			e.detail.shouldSwap = false;
			refresh(el);
		}
	});

	// refresh asks htmx to re-fetch el, at most once per DEBOUNCE_MS: a
	// burst of changes costs one request. While the user is editing or
	// pressing in el it waits. An el replaced meanwhile needs nothing: what
	// replaced it carries the mark it was read at, and is read again if a
	// change it may lack was heard (htmx:load below).
	function refresh(el) {
		if (pending.has(el)) return;
		pending.set(el, setTimeout(function () {
			pending.delete(el);
			if (!document.body.contains(el) || !window.htmx) return;
			if (editing(el) || pressing(el)) { refresh(el); return; }
			window.htmx.trigger(el, "atoll:changed");
		}, DEBOUNCE_MS));
	}

	// ---- What the page has followed of its node's changes (see
	// web/changemark.go). Each change has a seq; each page, section and
	// notice carries the mark ("node:seq") it was read at. stream.seq is
	// the last change heard (-1: none yet); recent keeps the last changes
	// heard, to tell which sections they concern.

	var RECENT = 256;
	var stream = { node: "", seq: -1, recent: [] };

	function parseMark(m) {
		var i = (m || "").lastIndexOf(":");
		if (i < 0) return null;
		var seq = parseInt(m.slice(i + 1), 10);
		return isNaN(seq) ? null : { node: m.slice(0, i), seq: seq };
	}

	// missed reports whether el, read at mark m, may lack a change that
	// concerns it and that the page heard of meanwhile. A mark of another
	// node cannot be compared: the stream's own changes cover it.
	function missed(el, m) {
		var at = parseMark(m);
		if (!at || at.node !== stream.node || at.seq >= stream.seq) return false;
		if (stream.recent.length === 0 || stream.recent[0].seq > at.seq + 1) return true;
		return stream.recent.some(function (c) { return c.seq > at.seq && concerns(el, c); });
	}

	// An innerHTML section keeps its element: the answer's mark is noted on
	// it before the swap. A notice or banner swapped whole brings its own.
	document.addEventListener("htmx:beforeSwap", function (e) {
		var el = e.detail.target, m = e.detail.xhr && e.detail.xhr.getResponseHeader("X-Atoll-Changes");
		if (m && el && el.hasAttribute && el.hasAttribute("data-live-topics")) el.setAttribute("data-changes", m);
	});

	// New content (a re-read section, a notice an action put in a row) read
	// before a change that concerns it arrived is read again: that change's
	// own re-fetch was aimed at the element this content replaced, or at
	// none (the notice was not in the page yet).
	document.addEventListener("htmx:load", function (e) {
		var elt = e.detail && e.detail.elt;
		if (!elt || !elt.querySelectorAll) return;
		var live = Array.prototype.slice.call(elt.querySelectorAll("[data-live-topics]"));
		var up = elt.closest && elt.closest("[data-live-topics]");
		if (up) live.push(up);
		live.forEach(function (el) { if (missed(el, el.getAttribute("data-changes"))) refresh(el); });
	});

	function listen() {
		if (!window.EventSource || sections().length === 0) return;
		var es = new EventSource("/api/v1/changes");
		// Changes are not replayed: when a stream begins (at first, or after
		// the browser reconnected) past the mark of the last change the page
		// followed (at first the page's own), every section is read again.
		var followed = document.body.getAttribute("data-changes") || "";
		es.addEventListener("hello", function (ev) {
			var h = {};
			try { h = JSON.parse(ev.data); } catch (e) { /* re-read below */ }
			var at = parseMark(h.mark);
			if (!h.mark || h.mark !== followed) sections().forEach(refresh);
			stream.node = at ? at.node : "";
			stream.seq = at ? at.seq : -1;
			stream.recent = [];
			window.atollLive.streaming = true;
		});
		es.onmessage = function (ev) {
			var c;
			try { c = JSON.parse(ev.data); } catch (e) { return; }
			if (c.seq) {
				stream.seq = c.seq;
				stream.recent.push(c);
				if (stream.recent.length > RECENT) stream.recent.shift();
			} else {
				// Changes were dropped: this one re-reads every section, and
				// what is read from now on is compared with what comes next.
				stream.recent = [];
			}
			followed = c.seq ? stream.node + ":" + c.seq : "";
			document.body.dispatchEvent(new CustomEvent("atoll:change", { detail: c }));
			sections().forEach(function (el) { if (concerns(el, c)) refresh(el); });
		};
	}

	// ---- ANSI colours, as the server renders them (package ansi).

	var COLOURS = ["black", "red", "green", "yellow", "blue", "magenta", "cyan", "white"];

	function applySGR(st, params) {
		if (params === "") return {};
		var ps = params.split(";");
		for (var i = 0; i < ps.length; i++) {
			if (ps[i] !== "" && !/^[0-9]+$/.test(ps[i])) continue;
			var n = ps[i] === "" ? 0 : parseInt(ps[i], 10);
			if (n === 0) st = {};
			else if (n === 1) st.bold = true;
			else if (n === 2) st.dim = true;
			else if (n === 3) st.italic = true;
			else if (n === 4) st.underline = true;
			else if (n === 22) { st.bold = false; st.dim = false; }
			else if (n === 23) st.italic = false;
			else if (n === 24) st.underline = false;
			else if (n >= 30 && n <= 37) st.fg = COLOURS[n - 30];
			else if (n === 39) st.fg = "";
			else if (n >= 40 && n <= 47) st.bg = COLOURS[n - 40];
			else if (n === 49) st.bg = "";
			else if (n >= 90 && n <= 97) st.fg = "bright-" + COLOURS[n - 90];
			else if (n >= 100 && n <= 107) st.bg = "bright-" + COLOURS[n - 100];
			else if (n === 38 || n === 48) {
				if (ps[i + 1] === "5") i += 2;
				else if (ps[i + 1] === "2") i += 4;
			}
		}
		return st;
	}

	function classesOf(st) {
		var c = [];
		if (st.bold) c.push("b");
		if (st.dim) c.push("dim");
		if (st.italic) c.push("i");
		if (st.underline) c.push("u");
		if (st.fg) c.push("fg-" + st.fg);
		if (st.bg) c.push("bg-" + st.bg);
		return c;
	}

	// parseANSI splits a line into [{text, classes}], dropping escape
	// sequences other than SGR and control characters other than tab.
	function parseANSI(line) {
		var out = [], st = {}, text = "";
		function flush() {
			if (text) out.push({ text: text, classes: classesOf(st) });
			text = "";
		}
		for (var i = 0; i < line.length;) {
			var ch = line.charCodeAt(i);
			if (ch === 0x1b) {
				var next = line.charAt(i + 1);
				if (next === "[") {
					var j = i + 2;
					while (j < line.length && (line.charCodeAt(j) < 0x40 || line.charCodeAt(j) > 0x7e)) j++;
					if (j < line.length && line.charAt(j) === "m") {
						flush();
						st = applySGR(st, line.slice(i + 2, j));
					}
					i = j + 1;
				} else if (next === "]") {
					var k = i + 2;
					while (k < line.length && line.charCodeAt(k) !== 0x07 && !(line.charCodeAt(k) === 0x1b && line.charAt(k + 1) === "\\")) k++;
					i = k < line.length && line.charCodeAt(k) === 0x1b ? k + 2 : k + 1;
				} else {
					i += 2;
				}
			} else if ((ch < 0x20 && ch !== 0x09) || ch === 0x7f) {
				i++;
			} else {
				text += line.charAt(i);
				i++;
			}
		}
		flush();
		return out;
	}

	var DIFF = [["-/+", "replace"], ["+/-", "replace"], ["<=", "read"], ["+", "add"], ["~", "change"], ["-", "destroy"]];

	// diffClass is ansi.Diff: a lone +, ~ or - counts only indented (at the
	// start of the line it is a list bullet of terraform init).
	function diffClass(plain) {
		var t = plain.replace(/^[ \t]+/, ""), indented = t.length < plain.length;
		for (var i = 0; i < DIFF.length; i++) {
			var m = DIFF[i][0];
			if (t.slice(0, m.length) === m && (t.length === m.length || t.charAt(m.length) === " ")) {
				return m.length === 1 && !indented ? "" : "d-" + DIFF[i][1];
			}
		}
		return "";
	}

	// lineElement builds div.ln[data-seq] with a span per styled run, as
	// templates.LogLine does.
	function lineElement(l) {
		var div = document.createElement("div");
		div.classList.add("ln", "s-" + l.stream);
		div.setAttribute("data-seq", String(l.seq));
		var segs = parseANSI(l.text || ""), plain = "";
		for (var i = 0; i < segs.length; i++) {
			plain += segs[i].text;
			if (segs[i].classes.length === 0) {
				div.appendChild(document.createTextNode(segs[i].text));
			} else {
				var span = document.createElement("span");
				span.classList.add.apply(span.classList, segs[i].classes);
				span.textContent = segs[i].text;
				div.appendChild(span);
			}
		}
		var d = diffClass(plain);
		if (d) div.classList.add(d);
		return div;
	}

	// ---- The job log: #log[data-job][data-last-seq][data-live].

	var MAX_LINES = 10000; // lines kept in the page; the download has all

	function followLog(log) {
		var job = log.getAttribute("data-job");
		var last = parseInt(log.getAttribute("data-last-seq") || "0", 10);
		var follow = document.getElementById("follow");
		var label = document.getElementById("follow-label");
		if (label) label.hidden = false;

		function atBottom() { return log.scrollHeight - log.scrollTop - log.clientHeight < 8; }
		function toBottom() { log.scrollTop = log.scrollHeight; }

		// A link to one line (#L<seq>, from a search): show it, or ask for
		// the part of the log around it when it is not on the page. It
		// returns false when the page is being replaced.
		function showTarget() {
			var m = /^#L([0-9]+)$/.exec(location.hash);
			if (!m) return true;
			var target = document.getElementById("L" + m[1]);
			if (!target) {
				if (/[?&]line=/.test(location.search)) return true; // not stored
				location.replace(location.pathname + "?line=" + m[1] + location.hash);
				return false;
			}
			var old = log.querySelector(".ln.target");
			if (old) old.classList.remove("target");
			if (follow) follow.checked = false;
			target.classList.add("target");
			target.scrollIntoView({ block: "center" });
			return true;
		}
		if (!showTarget()) return;
		if (!/^#L[0-9]+$/.test(location.hash)) toBottom();
		window.addEventListener("hashchange", showTarget);

		// Scrolling up stops following; scrolling back to the bottom resumes.
		// (Following scrolls to the bottom, which keeps it on.)
		log.addEventListener("scroll", function () {
			if (follow) follow.checked = atBottom();
		});
		if (follow) follow.addEventListener("change", function () { if (follow.checked) toBottom(); });

		if (log.getAttribute("data-live") !== "true") return;

		var queue = [], scheduled = false;
		function flush() {
			scheduled = false;
			if (queue.length === 0) return;
			var frag = document.createDocumentFragment();
			for (var i = 0; i < queue.length; i++) frag.appendChild(lineElement(queue[i]));
			queue = [];
			log.appendChild(frag);
			var empty = document.getElementById("log-empty");
			if (empty) empty.remove();
			while (log.childElementCount > MAX_LINES) log.firstElementChild.remove();
			if (!follow || follow.checked) toBottom();
		}

		var backoff = 1000;
		function connect() {
			var proto = location.protocol === "https:" ? "wss:" : "ws:";
			// batch=1: each message is an array of the lines ready at once.
			var ws = new WebSocket(proto + "//" + location.host + "/jobs/" + encodeURIComponent(job) + "/ws?batch=1&from=" + (last + 1));
			ws.onmessage = function (ev) {
				var lines;
				try { lines = JSON.parse(ev.data); } catch (e) { return; }
				if (!Array.isArray(lines)) lines = [lines];
				for (var i = 0; i < lines.length; i++) {
					var l = lines[i];
					if (l.seq <= last) continue; // never twice
					last = l.seq;
					queue.push(l);
				}
				backoff = 1000;
				if (!scheduled) {
					scheduled = true;
					window.requestAnimationFrame(flush);
				}
			};
			ws.onclose = function (ev) {
				if (ev.code === 1000) { // the job ended and every line was sent
					flush();
					log.setAttribute("data-live", "false");
					var header = document.getElementById("job-header");
					if (header) refresh(header);
					return;
				}
				if (ev.code === 1008) { // the viewer's access ended (disabled, signed out)
					flush();
					log.setAttribute("data-live", "false");
					window.location.reload(); // shows the sign-in page, not a stale log
					return;
				}
				// Lost: resume after the last line received, backing off.
				setTimeout(connect, backoff);
				backoff = Math.min(backoff * 2, 30000);
			};
		}
		connect();
	}

	function start() {
		listen();
		var log = document.getElementById("log");
		if (log) followLog(log);
	}

	if (document.readyState === "loading") document.addEventListener("DOMContentLoaded", start);
	else start();

	// For tests in a browser.
	// streaming turns true once the change stream has begun.
	window.atollLive = { parseANSI: parseANSI, diffClass: diffClass, streaming: false };
})();
