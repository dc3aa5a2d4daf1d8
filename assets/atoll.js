// Atoll control pages: unlock buttons, the comment box, confirmations and
// sign-in on 401. Live updates are in live.js: no page reloads itself.
// Plain JavaScript, no build step; the pages work read-only without it.
"use strict";

(function () {
	function show(el, msg, ok) {
		if (!el) return;
		el.textContent = msg;
		el.classList.toggle("ok", !!ok);
		el.hidden = !msg;
	}

	// signIn sends the browser to the login page, coming back here after.
	function signIn() {
		location.assign("/login?next=" + encodeURIComponent(location.pathname + location.search));
	}

	// api sends a JSON request and resolves to the decoded answer, or rejects
	// with the server's {"error": "..."} message. The session cookie
	// authenticates it; when the session has ended (401) the browser goes to
	// the login page.
	function api(method, url, body) {
		// Every call that changes state says JSON: the server refuses a body
		// an HTML form could send (a call without a body needs no type).
		var headers = { "Accept": "application/json" };
		if (method !== "GET") headers["Content-Type"] = "application/json";
		return fetch(url, {
			method: method,
			headers: headers,
			body: body === undefined ? undefined : JSON.stringify(body),
			credentials: "same-origin"
		}).then(function (res) {
			return res.text().then(function (text) {
				var data = null;
				try { data = text ? JSON.parse(text) : null; } catch (e) { data = null; }
				if (res.ok) return data;
				var msg = (data && data.error) || (res.status + " " + res.statusText);
				if (res.status === 401) {
					signIn();
				}
				throw new Error(msg);
			});
		}, function () {
			throw new Error("Network error: is Atoll running?");
		});
	}

	// htmx: a request refused for want of a session goes to the login page
	// (the server also sends HX-Redirect; this covers swaps that ignore it).
	document.addEventListener("htmx:responseError", function (ev) {
		if (ev.detail && ev.detail.xhr && ev.detail.xhr.status === 401) signIn();
	});

	// Buttons in forms with data-confirm ask first (admin page).
	document.addEventListener("click", function (ev) {
		var btn = ev.target.closest("button[data-confirm]");
		if (btn && !window.confirm(btn.getAttribute("data-confirm"))) ev.preventDefault();
	});

	// Unlock buttons: <button data-unlock="ID" data-label="...">.
	document.addEventListener("click", function (ev) {
		var btn = ev.target.closest("button[data-unlock]");
		if (!btn) return;
		ev.preventDefault();
		var label = btn.getAttribute("data-label") || "this lock";
		if (!window.confirm("Unlock " + label + "?\nThe pull request's pending plan for it is discarded.")) return;
		var flash = document.getElementById("flash");
		btn.disabled = true;
		api("DELETE", "/api/v1/locks/" + encodeURIComponent(btn.getAttribute("data-unlock")))
			.then(function () {
				// No reload: the row goes now, the live sections re-read.
				var row = btn.closest("tr");
				if (row) row.remove();
				show(flash, "Unlocked " + label + ".", true);
			})
			.catch(function (err) {
				show(flash, "Unlock failed: " + err.message);
				btn.disabled = false;
			});
	});

	// Comment box: <form data-comment-form> posts with htmx (or as a plain
	// form); once posted, the box is emptied. The comment appears through
	// the page's live conversation section, the outcome in the form.
	document.addEventListener("htmx:afterRequest", function (ev) {
		var form = ev.detail && ev.detail.elt;
		if (!form || !form.matches || !form.matches("form[data-comment-form]")) return;
		if (ev.detail.successful) {
			var area = form.querySelector("textarea[name=body]");
			if (area) area.value = "";
		}
	});

	// A form htmx has not processed yet (a live section swapped it in a
	// moment ago, before htmx's settle step) would be submitted as a plain
	// form, and the page reloaded. htmx's own handler, on the form,
	// cancels the submission it takes, so one that reaches the document
	// uncancelled is given to htmx.
	document.addEventListener("submit", function (ev) {
		var form = ev.target;
		if (ev.defaultPrevented || !window.htmx || !form.matches || !form.matches("form[hx-post]")) return;
		if (form.hasAttribute("data-htmx-handoff")) return; // htmx did not take it twice: let it go
		ev.preventDefault();
		var submitter = ev.submitter && ev.submitter.form === form ? ev.submitter : undefined;
		window.htmx.process(form);
		// Submitted again once this submission is over: a form ignores a
		// submit asked for while its submit event is being dispatched.
		setTimeout(function () {
			form.setAttribute("data-htmx-handoff", "");
			try {
				form.requestSubmit(submitter);
			} finally {
				form.removeAttribute("data-htmx-handoff");
			}
		}, 0);
	});

	// Ctrl/Cmd+Enter in the comment box submits it.
	document.addEventListener("keydown", function (ev) {
		if (ev.key !== "Enter" || !(ev.ctrlKey || ev.metaKey)) return;
		var area = ev.target.closest("form[data-comment-form] textarea");
		if (area) area.form.requestSubmit();
	});
})();
