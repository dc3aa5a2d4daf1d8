package drift

import (
	"testing"
	"time"
)

// TestRemediationResultJSON: Atlantis's alpha drift remediation (v0.47)
// leaves completed_at out of a run that has not finished and writes it
// once the run has; projects is always an array, and drift_before and
// drift_after appear only when set.
func TestRemediationResultJSON(t *testing.T) {
	running := RemediationResult{ID: "r-1", Repository: "owner/repo", Ref: "main", Action: ActionPlan,
		Status: RunRunning, StartedAt: when}
	if got, want := mustJSON(t, running), `{"id":"r-1","repository":"owner/repo","ref":"main","action":"plan",`+
		`"status":"running","started_at":"2026-01-02T03:04:05.000000006Z","projects":[],`+
		`"summary":{"total_projects":0,"success_count":0,"failure_count":0}}`; got != want {
		t.Errorf("running:\n got %s\nwant %s", got, want)
	}
	before := FromPlan(1, 0, 0, 0, 0, false, "Plan: 1 to add, 0 to change, 0 to destroy.")
	done := running
	done.Action = ActionApply
	done.Projects = []ProjectRemediation{{ProjectName: "vpc", Directory: "modules/vpc", Workspace: "default",
		Status: RunSuccess, ApplyOutput: "applied", DriftBefore: &before, DriftAfter: &Details{Summary: ApplySucceeded}}}
	done.Complete(when.Add(time.Second))
	want := `{"id":"r-1","repository":"owner/repo","ref":"main","action":"apply","status":"success",` +
		`"started_at":"2026-01-02T03:04:05.000000006Z","completed_at":"2026-01-02T03:04:06.000000006Z",` +
		`"projects":[{"project_name":"vpc","directory":"modules/vpc","workspace":"default","status":"success",` +
		`"apply_output":"applied",` +
		`"drift_before":{"to_add":1,"to_change":0,"to_destroy":0,"to_import":0,"to_forget":0,"total_changes":1,` +
		`"summary":"Plan: 1 to add, 0 to change, 0 to destroy.","changes_outside":false},` +
		`"drift_after":{"to_add":0,"to_change":0,"to_destroy":0,"to_import":0,"to_forget":0,"total_changes":0,` +
		`"summary":"Apply completed successfully","changes_outside":false}}],` +
		`"summary":{"total_projects":1,"success_count":1,"failure_count":0}}`
	if got := mustJSON(t, done); got != want {
		t.Errorf("done:\n got %s\nwant %s", got, want)
	}
}

// TestComplete: Atlantis's alpha drift remediation (v0.47) counts
// successes and failures and derives the run's status from them: success
// with no failures (even with no projects), failed with no successes,
// partial with both; a run whose targets could not be chosen failed,
// with its top-level error and no projects.
func TestComplete(t *testing.T) {
	ok, bad := ProjectRemediation{Status: RunSuccess}, ProjectRemediation{Status: RunFailed}
	for _, tc := range []struct {
		name     string
		projects []ProjectRemediation
		err      string
		status   string
		summary  RemediationSummary
	}{
		{"no projects", nil, "", RunSuccess, RemediationSummary{}},
		{"one success", []ProjectRemediation{ok}, "", RunSuccess, RemediationSummary{1, 1, 0}},
		{"one failure", []ProjectRemediation{bad}, "", RunFailed, RemediationSummary{1, 0, 1}},
		{"both", []ProjectRemediation{ok, bad}, "", RunPartial, RemediationSummary{2, 1, 1}},
		{"every target failed", []ProjectRemediation{bad, bad}, "", RunFailed, RemediationSummary{2, 0, 2}},
		{"selection failed", nil, "failed to get drift data: storage unavailable", RunFailed, RemediationSummary{}},
		{"a running project counts as neither", []ProjectRemediation{ok, {Status: RunRunning}}, "", RunSuccess,
			RemediationSummary{2, 1, 0}},
	} {
		r := RemediationResult{Status: RunRunning, Projects: tc.projects, Error: tc.err}
		r.Complete(when)
		if r.Status != tc.status || r.Summary != tc.summary || r.CompletedAt == nil || !r.CompletedAt.Equal(when) {
			t.Errorf("%s: status %q summary %+v completed %v, want %q %+v %v",
				tc.name, r.Status, r.Summary, r.CompletedAt, tc.status, tc.summary, when)
		}
	}
}

// TestRemediationStatusCode: Atlantis's alpha drift remediation (v0.47)
// answers success with 200 and partial with 207 (success envelope), a
// failure with project results with 409 CONFLICT, and a failure before
// any project with 500.
func TestRemediationStatusCode(t *testing.T) {
	for _, tc := range []struct {
		name   string
		r      RemediationResult
		status int
		code   string
	}{
		{"success", RemediationResult{Status: RunSuccess, Projects: []ProjectRemediation{{Status: RunSuccess}}}, 200, ""},
		{"success without projects", RemediationResult{Status: RunSuccess}, 200, ""},
		{"partial", RemediationResult{Status: RunPartial, Projects: []ProjectRemediation{{}, {}}}, 207, ""},
		{"failed projects", RemediationResult{Status: RunFailed, Projects: []ProjectRemediation{{Status: RunFailed}}}, 409, "CONFLICT"},
		{"failed without projects", RemediationResult{Status: RunFailed, Error: "cached drift with has_drift=true is required before remediation apply; run detection"}, 500, "INTERNAL_ERROR"},
	} {
		status, code := RemediationStatusCode(tc.r)
		if status != tc.status || code != tc.code {
			t.Errorf("%s: RemediationStatusCode = %d, %q, want %d, %q", tc.name, status, code, tc.status, tc.code)
		}
	}
}

// TestRemediationListJSON: Atlantis's alpha drift history route (v0.47)
// echoes the repository, counts the results and writes them as an array.
func TestRemediationListJSON(t *testing.T) {
	for _, tc := range []struct {
		name string
		l    RemediationList
		want string
	}{
		{"empty", NewRemediationList("owner/repo", nil), `{"repository":"owner/repo","count":0,"results":[]}`},
		{"zero value", RemediationList{}, `{"repository":"","count":0,"results":[]}`},
		{"one", NewRemediationList("owner/repo", []RemediationResult{{ID: "result-1", Status: RunPending, StartedAt: when}}),
			`{"repository":"owner/repo","count":1,"results":[{"id":"result-1","repository":"","ref":"","action":"",` +
				`"status":"pending","started_at":"2026-01-02T03:04:05.000000006Z","projects":[],` +
				`"summary":{"total_projects":0,"success_count":0,"failure_count":0}}]}`},
	} {
		if got := mustJSON(t, tc.l); got != tc.want {
			t.Errorf("%s:\n got %s\nwant %s", tc.name, got, tc.want)
		}
	}
}
