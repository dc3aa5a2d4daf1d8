package drift

import (
	"reflect"
	"testing"
)

// TestWebhookPayload: Atlantis's drift webhook (v0.47) carries the
// repository as given, the first project's ref (or the normalized request
// ref when there are none), the detection id, the counts, and each project
// with its directory under "path", its counts flattened and its summary
// always present. Plan output never goes out.
func TestWebhookPayload(t *testing.T) {
	app := ProjectDrift{ProjectName: "app", Directory: "app", Workspace: "default", Ref: "main", LastChecked: when,
		PlanOutput: "secret plan"}
	app.SetDetails(FromPlan(1, 0, 0, 0, 0, false, "Plan: 1 to add, 0 to change, 0 to destroy."))
	quiet := ProjectDrift{ProjectName: "db", Directory: "db", Workspace: "production", Ref: "main", LastChecked: when}
	quiet.SetDetails(FromPlan(0, 0, 0, 0, 0, false, "No changes. Your infrastructure matches the configuration."))
	unplanned := ProjectDrift{ProjectName: "x", Directory: "x", Workspace: "default", Ref: "dev"}
	for _, tc := range []struct {
		name     string
		reqRef   string
		projects []ProjectDrift
		want     string
	}{
		{"drift", "refs/heads/main", []ProjectDrift{app},
			`{"repository":"Repo","ref":"main","detection_id":"d-1","projects_with_drift":1,"total_projects":1,` +
				`"projects":[{"project_name":"app","path":"app","workspace":"default","has_drift":true,"to_add":1,` +
				`"to_change":0,"to_destroy":0,"to_import":0,"to_forget":0,` +
				`"summary":"Plan: 1 to add, 0 to change, 0 to destroy."}]}`},
		{"no drift", "main", []ProjectDrift{quiet},
			`{"repository":"Repo","ref":"main","detection_id":"d-1","projects_with_drift":0,"total_projects":1,` +
				`"projects":[{"project_name":"db","path":"db","workspace":"production","has_drift":false,"to_add":0,` +
				`"to_change":0,"to_destroy":0,"to_import":0,"to_forget":0,` +
				`"summary":"No changes. Your infrastructure matches the configuration."}]}`},
		{"no details", "main", []ProjectDrift{unplanned},
			`{"repository":"Repo","ref":"dev","detection_id":"d-1","projects_with_drift":0,"total_projects":1,` +
				`"projects":[{"project_name":"x","path":"x","workspace":"default","has_drift":false,"to_add":0,` +
				`"to_change":0,"to_destroy":0,"to_import":0,"to_forget":0,"summary":""}]}`},
		{"zero projects", " refs/heads/main ", nil,
			`{"repository":"Repo","ref":"main","detection_id":"d-1","projects_with_drift":0,"total_projects":0,"projects":[]}`},
	} {
		if got := mustJSON(t, NewWebhookPayload("Repo", tc.reqRef, "d-1", tc.projects)); got != tc.want {
			t.Errorf("%s:\n got %s\nwant %s", tc.name, got, tc.want)
		}
	}
	if got := mustJSON(t, WebhookPayload{}); got != `{"repository":"","ref":"","detection_id":"","projects_with_drift":0,"total_projects":0,"projects":[]}` {
		t.Errorf("zero payload: %s", got)
	}
}

// TestSendWebhook: Atlantis's alpha drift API (v0.47) sends the drift
// webhook after a detection only when no project has an error; runs
// without drift and without projects are sent too.
func TestSendWebhook(t *testing.T) {
	for _, tc := range []struct {
		name     string
		projects []ProjectDrift
		send     bool
	}{
		{"zero projects", nil, true},
		{"no drift", []ProjectDrift{{}}, true},
		{"drift", []ProjectDrift{{HasDrift: true}}, true},
		{"policy failure", []ProjectDrift{{HasDrift: true, Error: "policy_check failed: policy denied"}}, false},
		{"one failed of two", []ProjectDrift{{}, {Error: "terraform plan failed"}}, false},
	} {
		if got := ShouldSendWebhook(tc.projects); got != tc.send {
			t.Errorf("%s: ShouldSendWebhook = %v, want %v", tc.name, got, tc.send)
		}
	}
}

// TestSlackMessage: Atlantis's Slack drift message (v0.47) is red
// ("danger") with drift and green ("good") without, says which, and has
// four short fields: Repository, Ref, Projects with drift ("n / total")
// and Detection ID.
func TestSlackMessage(t *testing.T) {
	fields := func(drifted string) []SlackField {
		return []SlackField{
			{"Repository", "owner/repo", true},
			{"Ref", "main", true},
			{"Projects with drift", drifted, true},
			{"Detection ID", "d-1", true},
		}
	}
	for _, tc := range []struct {
		name string
		p    WebhookPayload
		want SlackAttachment
	}{
		{"drift", WebhookPayload{Repository: "owner/repo", Ref: "main", DetectionID: "d-1", ProjectsWithDrift: 1, TotalProjects: 2},
			SlackAttachment{"danger", "Drift detected in owner/repo", fields("1 / 2")}},
		{"no drift", WebhookPayload{Repository: "owner/repo", Ref: "main", DetectionID: "d-1", TotalProjects: 3},
			SlackAttachment{"good", "No drift in owner/repo", fields("0 / 3")}},
		{"no projects", WebhookPayload{Repository: "owner/repo", Ref: "main", DetectionID: "d-1"},
			SlackAttachment{"good", "No drift in owner/repo", fields("0 / 0")}},
	} {
		if got := SlackMessage(tc.p); !reflect.DeepEqual(got, tc.want) {
			t.Errorf("%s:\n got %+v\nwant %+v", tc.name, got, tc.want)
		}
	}
}
