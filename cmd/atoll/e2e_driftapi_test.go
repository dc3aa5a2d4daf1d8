package main_test

import (
	"bytes"
	"encoding/json"
	"net/http"
	"path/filepath"
	"strings"
	"testing"

	main "github.com/atollhq/atoll/cmd/atoll"
)

// driftCall calls the drift API with the API secret and decodes its
// envelope's data into data.
func driftCall(t *testing.T, method, url, body string, data any) (int, string) {
	t.Helper()
	req, _ := http.NewRequest(method, url, bytes.NewBufferString(body))
	if body != "" {
		req.Header.Set("Content-Type", "application/json")
	}
	req.Header.Set("X-Atlantis-Token", testAPISecret)
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	text := readAll(t, resp)
	var env struct {
		Success bool            `json:"success"`
		Data    json.RawMessage `json:"data"`
	}
	if err := json.Unmarshal([]byte(text), &env); err != nil {
		t.Fatalf("%s %s: %d %s", method, url, resp.StatusCode, text)
	}
	if env.Success && data != nil {
		if err := json.Unmarshal(env.Data, data); err != nil {
			t.Fatal(err)
		}
	}
	return resp.StatusCode, text
}

type driftAPIProject struct {
	ProjectName    string `json:"project_name"`
	Directory      string `json:"directory"`
	Ref            string `json:"ref"`
	ResolvedCommit string `json:"resolved_commit"`
	DetectionID    string `json:"detection_id"`
	HasDrift       bool   `json:"has_drift"`
	Drift          *struct {
		ToAdd   int    `json:"to_add"`
		Summary string `json:"summary"`
	} `json:"drift"`
	PlanOutput string `json:"plan_output"`
	Error      string `json:"error"`
}

// Atlantis's drift API over HTTP, with real Terraform: detect plans the
// branch and answers its drift, which status then shows.
func TestDriftAPIDetectAndStatus(t *testing.T) {
	state := filepath.Join(t.TempDir(), "app.tfstate")
	e := newE2EWith(t, map[string]string{"app/main.tf": driftProject(state, "v1")}, func(c *main.Config) { c.EnableDriftDetection = true })
	// Atoll knows a repository from its webhooks.
	if status, text := driftCall(t, "POST", e.m.URL+"/api/drift/detect", `{"repository":"acme/infra","ref":"main","type":"Github"}`, nil); status != 404 ||
		!strings.Contains(text, "repository not found: acme/infra") {
		t.Fatalf("unknown repository: %d %s", status, text)
	}
	e.open(1, "docs", map[string]string{"README.md": "docs\n"}, "README.md")

	var det struct {
		ID       string            `json:"id"`
		Projects []driftAPIProject `json:"projects"`
		Summary  map[string]int    `json:"summary"`
	}
	status, text := driftCall(t, "POST", e.m.URL+"/api/drift/detect",
		`{"repository":"acme/infra","ref":"refs/heads/main","type":"Github","include_plan_output":true}`, &det)
	if status != 200 || len(det.Projects) != 1 {
		t.Fatalf("detect: %d %s", status, text)
	}
	p := det.Projects[0]
	if p.Directory != "app" || p.Ref != "main" || !p.HasDrift || p.Drift == nil || p.Drift.ToAdd != 1 || p.DetectionID != det.ID || det.ID == "" ||
		len(p.ResolvedCommit) != 40 || p.Drift.Summary != "Plan: 1 to add, 0 to change, 0 to destroy." || !strings.Contains(p.PlanOutput, "terraform_data.app") {
		t.Fatalf("detect: %s", text)
	}
	if det.Summary["projects_with_drift"] != 1 {
		t.Fatalf("summary %v", det.Summary)
	}

	var st struct {
		Repository string            `json:"repository"`
		Projects   []driftAPIProject `json:"projects"`
	}
	status, text = driftCall(t, "GET", e.m.URL+"/api/drift/status?repository=acme/infra&type=Github&ref=main", "", &st)
	if status != 200 || len(st.Projects) != 1 || st.Projects[0].DetectionID != det.ID || !st.Projects[0].HasDrift ||
		st.Projects[0].Drift.ToAdd != 1 || st.Projects[0].PlanOutput != "" {
		t.Fatalf("status: %d %s", status, text)
	}
	// A plan-only remediation plans again without recording drift.
	status, text = driftCall(t, "POST", e.m.URL+"/api/drift/remediate", `{"repository":"acme/infra","ref":"main","type":"Github","projects":["app"]}`, nil)
	if status != 200 || !strings.Contains(text, `"status":"success"`) || !strings.Contains(text, `"to_add":1`) {
		t.Fatalf("remediate: %d %s", status, text)
	}
	status, text = driftCall(t, "GET", e.m.URL+"/api/drift/status?repository=acme/infra&type=Github", "", &st)
	if status != 200 || len(st.Projects) != 1 || st.Projects[0].DetectionID != det.ID {
		t.Fatalf("status after the remediation: %d %s", status, text)
	}
}
