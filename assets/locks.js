// Locks page (templates/locks.templ): "select all", and a confirm dialog
// before an unlock form is sent. Once confirmed, the form carries
// confirm=1, so the server releases at once; without JavaScript the server
// shows its own confirmation page instead.
"use strict";

(function () {
	document.addEventListener("change", function (ev) {
		var all = ev.target.closest("input[data-check-all]");
		if (!all) return;
		var form = all.closest("form");
		form.querySelectorAll("input[type=checkbox][name=id]").forEach(function (box) { box.checked = all.checked; });
	});

	document.addEventListener("submit", function (ev) {
		var form = ev.target.closest("form[data-unlock-form]");
		if (!form) return;
		var labels = [];
		var btn = ev.submitter;
		if (btn && btn.name === "id") {
			labels.push(btn.getAttribute("data-label") || ("lock " + btn.value));
		} else {
			form.querySelectorAll("input[type=checkbox][name=id]:checked").forEach(function (box) {
				labels.push(box.getAttribute("data-label") || ("lock " + box.value));
			});
		}
		if (labels.length === 0) {
			ev.preventDefault();
			window.alert("Tick the locks to unlock first.");
			return;
		}
		var shown = labels.slice(0, 15);
		if (labels.length > shown.length) shown.push("… and " + (labels.length - shown.length) + " more");
		var q = "Unlock " + (labels.length === 1 ? "this lock" : labels.length + " locks") + "?\n\n" + shown.join("\n") +
			"\n\nTheir pull requests' pending plans for these projects are discarded.";
		if (!window.confirm(q)) {
			ev.preventDefault();
			return;
		}
		// The entry list is built after this event: the field goes with it.
		var c = form.querySelector("input[name=confirm]");
		if (!c) {
			c = document.createElement("input");
			c.type = "hidden";
			c.name = "confirm";
			form.appendChild(c);
		}
		c.value = "1";
	});
})();
