package drift

import (
	"testing"
	"time"
)

// TestProjectDriftJSON: the DriftProject object of Atlantis's alpha drift
// API (v0.47): "drift" only when has_drift, the optional keys left out
// when empty, and the directory under "directory". A forget-only drift of
// 3 has total_changes 3.
func TestProjectDriftJSON(t *testing.T) {
	drifted := ProjectDrift{
		ProjectName: "vpc", Directory: "modules/vpc", Workspace: "default", Ref: "main", BaseBranch: "main",
		ResolvedCommit: "abc", DetectionID: "d-1", LastChecked: when, PlanOutput: "out",
	}
	drifted.SetDetails(FromPlan(0, 0, 0, 0, 3, false, "Plan: 0 to add, 0 to change, 0 to destroy, 3 to forget."))
	clean := ProjectDrift{ProjectName: "", Directory: ".", Workspace: "default", Ref: "main", LastChecked: when}
	clean.SetDetails(FromPlan(0, 0, 0, 0, 0, false, "No changes."))
	errored := ProjectDrift{ProjectName: "bad", Directory: "bad", Workspace: "default", Ref: "main", LastChecked: when,
		Error: "terraform plan failed"}
	for _, tc := range []struct {
		name string
		p    ProjectDrift
		want string
	}{
		{"drift", drifted, `{"project_name":"vpc","directory":"modules/vpc","workspace":"default","ref":"main",` +
			`"base_branch":"main","resolved_commit":"abc","detection_id":"d-1","has_drift":true,` +
			`"drift":{"to_add":0,"to_change":0,"to_destroy":0,"to_import":0,"to_forget":3,"total_changes":3,` +
			`"summary":"Plan: 0 to add, 0 to change, 0 to destroy, 3 to forget.","changes_outside":false},` +
			`"plan_output":"out","last_checked":"2026-01-02T03:04:05.000000006Z"}`},
		{"no drift", clean, `{"project_name":"","directory":".","workspace":"default","ref":"main",` +
			`"has_drift":false,"last_checked":"2026-01-02T03:04:05.000000006Z"}`},
		{"error", errored, `{"project_name":"bad","directory":"bad","workspace":"default","ref":"main",` +
			`"has_drift":false,"last_checked":"2026-01-02T03:04:05.000000006Z","error":"terraform plan failed"}`},
	} {
		if got := mustJSON(t, tc.p); got != tc.want {
			t.Errorf("%s:\n got %s\nwant %s", tc.name, got, tc.want)
		}
	}
	if clean.Drift == nil || clean.Drift.Summary != "No changes." {
		t.Errorf("a project without drift keeps its plan's details for the webhook, got %+v", clean.Drift)
	}
}

// TestSummarize: Atlantis's alpha drift API (v0.47) counts a project with
// both drift and an error in with_drift and with_errors, and only
// projects with neither as without_drift.
func TestSummarize(t *testing.T) {
	d, e, c := ProjectDrift{HasDrift: true}, ProjectDrift{Error: "x"}, ProjectDrift{}
	both := ProjectDrift{HasDrift: true, Error: "policy_check failed: policy denied"}
	for _, tc := range []struct {
		name     string
		projects []ProjectDrift
		want     Summary
	}{
		{"none", nil, Summary{}},
		{"drift and clean", []ProjectDrift{d, c}, Summary{2, 1, 1, 0}},
		{"drift with error and clean", []ProjectDrift{both, c}, Summary{2, 1, 1, 1}},
		{"error and drift", []ProjectDrift{e, d}, Summary{2, 1, 0, 1}},
		{"all kinds", []ProjectDrift{d, e, c, both, c}, Summary{5, 2, 2, 2}},
	} {
		if got := Summarize(tc.projects); got != tc.want {
			t.Errorf("%s: Summarize = %+v, want %+v", tc.name, got, tc.want)
		}
		if got := NewStatusResponse("r", tc.projects).Summary; got != tc.want {
			t.Errorf("%s: status summary = %+v, want %+v", tc.name, got, tc.want)
		}
		if got := NewDetectResponse("id", "r", when, tc.projects).Summary; got != tc.want {
			t.Errorf("%s: detect summary = %+v, want %+v", tc.name, got, tc.want)
		}
	}
}

// TestStatusResponse: Atlantis's alpha drift API (v0.47) echoes the
// repository as given, reports the newest last_checked as checked_at (Go's
// zero time with no projects) and always writes projects as an array.
func TestStatusResponse(t *testing.T) {
	older, newer := when.Add(-time.Hour), when
	r := NewStatusResponse("owner/repo", []ProjectDrift{{LastChecked: older}, {LastChecked: newer}, {LastChecked: older}})
	if !r.CheckedAt.Equal(newer) {
		t.Errorf("checked_at = %v, want the newest %v", r.CheckedAt, newer)
	}
	for _, tc := range []struct {
		name string
		r    StatusResponse
		want string
	}{
		{"empty", NewStatusResponse("owner/repo", nil),
			`{"repository":"owner/repo","projects":[],"checked_at":"0001-01-01T00:00:00Z",` +
				`"summary":{"total_projects":0,"projects_with_drift":0,"projects_without_drift":0,"projects_with_errors":0}}`},
		{"zero value", StatusResponse{},
			`{"repository":"","projects":[],"checked_at":"0001-01-01T00:00:00Z",` +
				`"summary":{"total_projects":0,"projects_with_drift":0,"projects_without_drift":0,"projects_with_errors":0}}`},
		{"one", NewStatusResponse("Repo", []ProjectDrift{{ProjectName: "a", Directory: "a", Workspace: "default",
			Ref: "main", LastChecked: when}}),
			`{"repository":"Repo","projects":[{"project_name":"a","directory":"a","workspace":"default","ref":"main",` +
				`"has_drift":false,"last_checked":"2026-01-02T03:04:05.000000006Z"}],` +
				`"checked_at":"2026-01-02T03:04:05.000000006Z",` +
				`"summary":{"total_projects":1,"projects_with_drift":0,"projects_without_drift":1,"projects_with_errors":0}}`},
	} {
		if got := mustJSON(t, tc.r); got != tc.want {
			t.Errorf("%s:\n got %s\nwant %s", tc.name, got, tc.want)
		}
	}
}

// TestDetectResponse: Atlantis's alpha drift API (v0.47) answers a
// detection with its id, the repository as given, the projects in plan
// order (always an array) and their summary.
func TestDetectResponse(t *testing.T) {
	for _, tc := range []struct {
		name string
		r    DetectResponse
		want string
	}{
		{"zero projects", NewDetectResponse("550e8400-e29b-41d4-a716-446655440000", "Repo", when, nil),
			`{"id":"550e8400-e29b-41d4-a716-446655440000","repository":"Repo","projects":[],` +
				`"detected_at":"2026-01-02T03:04:05.000000006Z",` +
				`"summary":{"total_projects":0,"projects_with_drift":0,"projects_without_drift":0,"projects_with_errors":0}}`},
		{"zero value", DetectResponse{},
			`{"id":"","repository":"","projects":[],"detected_at":"0001-01-01T00:00:00Z",` +
				`"summary":{"total_projects":0,"projects_with_drift":0,"projects_without_drift":0,"projects_with_errors":0}}`},
	} {
		if got := mustJSON(t, tc.r); got != tc.want {
			t.Errorf("%s:\n got %s\nwant %s", tc.name, got, tc.want)
		}
	}
}

// TestDetectStatusCode: Atlantis's alpha drift API (v0.47) answers 207
// when any project of a detection has an error (a failed plan, policy
// check or store), 200 otherwise, including for zero projects.
func TestDetectStatusCode(t *testing.T) {
	for _, tc := range []struct {
		name     string
		projects []ProjectDrift
		want     int
	}{
		{"none", nil, 200},
		{"clean and drift", []ProjectDrift{{}, {HasDrift: true}}, 200},
		{"one error", []ProjectDrift{{HasDrift: true}, {Error: "terraform plan failed"}}, 207},
		{"drift with store error", []ProjectDrift{{HasDrift: true, Error: "storing drift result: store unavailable"}}, 207},
	} {
		if got := DetectStatusCode(tc.projects); got != tc.want {
			t.Errorf("%s: DetectStatusCode = %d, want %d", tc.name, got, tc.want)
		}
	}
}
