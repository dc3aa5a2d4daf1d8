package web_test

import (
	"net/http"
	"strings"
	"testing"
)

// Each project's row says where its latest plan stands and why, links the
// plan and carries its buttons.
func TestPullPagePlanStates(t *testing.T) {
	f := newPullFixture(t)
	rec := f.do(t, "GET", "/repos/acme/infra/pulls/7", "", "", alice)
	if rec.Code != http.StatusOK {
		t.Fatalf("status %d: %s", rec.Code, rec.Body)
	}
	page := rec.Body.String()
	for _, tc := range []struct {
		dir, state string
		why        []string
	}{
		{"ready", "applicable", []string{"Ready to apply.", `href="/plans/` + itoa(f.plans["ready"]) + `"`, "bbbbbbb",
			`<span class="add">+1</span>`, `name="project" value="ready"`, `class="primary">Apply</button>`}},
		{"stale", "stale", []string{"Planned on aaaaaaa, an older commit than the head bbbbbbb: plan again before applying."}},
		{"applied", "applied", []string{"Already applied ("}},
		{"unlocked", "discarded", []string{"Discarded when the project&#39;s lock was released"}},
		{"failed", "failed", []string{"The latest plan, job #" + itoa(f.jobs["failed"]) + ", failed: Error: Unsupported argument. Fix it and plan again."}},
		{"never", "not planned", []string{"Never planned on this pull request: plan first."}},
		{"planning", "planning", []string{"Job #" + itoa(f.jobs["planning"]) + " is running: a new plan is on its way.",
			`name="dir" value="planning"`, `name="workspace" value="staging"`}},
	} {
		t.Run(tc.dir, func(t *testing.T) {
			r := row(t, page, f.projects[tc.dir])
			badge := strings.ReplaceAll(tc.state, "not planned", "none")
			wantContains(t, r, `class="badge badge-plan-`+badge+`"`, ">"+tc.state+"</span>")
			wantContains(t, r, tc.why...)
			// Every row has its buttons and its outcome place; a row
			// with a plan has that plan's approval panel.
			wantContains(t, r, `action="/repos/acme/infra/pulls/7/commands"`, `hx-post="/repos/acme/infra/pulls/7/commands"`,
				`hx-target="#outcome-`+itoa(f.projects[tc.dir])+`"`, `name="command" value="plan"`, `name="command" value="apply"`)
			if hasPanel := strings.Contains(r, `id="approval-`); hasPanel != (tc.dir != "never" && tc.dir != "planning") {
				t.Errorf("row %s: approval panel shown = %v", tc.dir, hasPanel)
			}
			if tc.dir != "ready" && strings.Contains(r, `class="primary">Apply`) {
				t.Error("Apply is offered as the next step of a plan that cannot be applied")
			}
		})
	}
	// Locks held have an Unlock form for the locks route; released ones none.
	wantContains(t, row(t, page, f.projects["ready"]), `action="/locks/unlock"`, `name="id" value="`+itoa(f.locks["ready"])+`"`,
		`name="back" value="/repos/acme/infra/pulls/7"`)
	if r := row(t, page, f.projects["unlocked"]); strings.Contains(r, "/locks/unlock") {
		t.Error("the unlocked project still shows an Unlock button")
	}
	// Plan all and Apply all.
	wantContains(t, page, ">Plan all</button>", ">Apply all</button>", `hx-target="#outcome-all"`)
}

// A viewer sees the page and the states, with the buttons disabled.
func TestPullPageViewer(t *testing.T) {
	f := newPullFixture(t)
	rec := f.do(t, "GET", "/repos/acme/infra/pulls/7", "", "", vera)
	if rec.Code != http.StatusOK {
		t.Fatalf("status %d", rec.Code)
	}
	r := row(t, rec.Body.String(), f.projects["ready"])
	wantContains(t, r, "Ready to apply.", `disabled title="This needs the operator role."`)
	if strings.Count(r, "disabled") != strings.Count(r, "<button") {
		t.Errorf("a viewer has an enabled button: %s", r)
	}
}

// ?request=N&for=ID puts the request's outcome in that row, following the
// change stream (?section=notice) while it can change, never polling; a
// request of another pull request, or nonsense, is ignored.
func TestPullPageNotice(t *testing.T) {
	f := newPullFixture(t)
	rec := f.do(t, "POST", "/repos/acme/infra/pulls/7/commands", "application/json", `{"command":"plan","project":"ready"}`, alice)
	if rec.Code != http.StatusOK {
		t.Fatalf("status %d: %s", rec.Code, rec.Body)
	}
	id := itoa(f.queued(t)[0].ID)
	ready := itoa(f.projects["ready"])
	page := f.do(t, "GET", "/repos/acme/infra/pulls/7?request="+id+"&for="+ready, "", "", alice).Body.String()
	wantContains(t, row(t, page, f.projects["ready"]), "Plan queued as request #"+id,
		`hx-get="/repos/acme/infra/pulls/7?for=`+ready+`&amp;request=`+id+`&amp;section=notice"`, `hx-trigger="atoll:changed"`,
		`hx-swap="outerHTML"`, `data-live-topics="job" data-live-repo="acme/infra" data-live-pull="7"`, "its job appears here")
	if strings.Contains(page, "load delay") || strings.Contains(page, "every ") {
		t.Error("the page polls")
	}
	if strings.Contains(row(t, page, f.projects["stale"]), "queued as request") {
		t.Error("the notice is shown in another row")
	}
	all := f.do(t, "GET", "/repos/acme/infra/pulls/7?request="+id+"&for=all", "", "", alice).Body.String()
	i := strings.Index(all, `id="outcome-all"`)
	if i < 0 || !strings.Contains(all[i:i+600], "Plan queued as request #"+id) || !strings.Contains(all[i:i+600], `section=notice`) {
		t.Errorf("for=all: no notice in the projects section")
	}
	for _, q := range []string{"?request=999&for=" + ready, "?request=x&for=1", "?request=" + id + "&for=x", "?request=-1"} {
		rec := f.do(t, "GET", "/repos/acme/infra/pulls/7"+q, "", "", alice)
		if rec.Code != http.StatusOK || strings.Contains(rec.Body.String(), "queued as request") {
			t.Errorf("%s: status %d, notice shown: %v", q, rec.Code, strings.Contains(rec.Body.String(), "queued as request"))
		}
	}
}
