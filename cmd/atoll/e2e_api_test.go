package main_test

import (
	"bytes"
	"encoding/json"
	"net/http"
	"strings"
	"testing"

	"github.com/atollhq/atoll"
)

type apiResult struct {
	Requests []atoll.Request `json:"requests"`
	Jobs     []atoll.Job     `json:"jobs"`
	Failed   bool            `json:"failed"`
	Message  string          `json:"message"`
	Error    string          `json:"error"`
}

func postAPI(t *testing.T, url string, header map[string]string, body string) (int, apiResult) {
	t.Helper()
	req, _ := http.NewRequest("POST", url, bytes.NewBufferString(body))
	req.Header.Set("Content-Type", "application/json")
	for k, v := range header {
		req.Header.Set(k, v)
	}
	resp, err := http.DefaultClient.Do(req) // with header's credentials only
	if err != nil {
		t.Fatal(err)
	}
	var out apiResult
	json.Unmarshal([]byte(readAll(t, resp)), &out)
	return resp.StatusCode, out
}

// The Atlantis-style API plans and applies like comments do, behind the
// API secret, and validates its input with the comment grammar.
func TestAtlantisAPI(t *testing.T) {
	e := newE2E(t)
	e.open(1, "api", map[string]string{"staging/main.tf": tfProject("staging", 2)}, "staging/main.tf")
	e.waitComment(1, 1)
	token := map[string]string{"X-Atlantis-Token": "api-secret-for-tests"}
	body := `{"Repository":"acme/infra","PR":1,"Paths":[{"Directory":"staging","Workspace":"default"}]}`

	cases := []struct {
		name   string
		header map[string]string
		body   string
		status int
		errSub string
	}{
		{"no token", nil, body, 401, "token"},
		{"wrong token", map[string]string{"X-Atlantis-Token": "nope"}, body, 401, "token"},
		{"wrong bearer", map[string]string{"Authorization": "Bearer nope"}, body, 401, "token"},
		{"bad JSON", token, `{"Repository":`, 400, "JSON"},
		{"no PR", token, `{"Repository":"acme/infra"}`, 400, "PR is required"},
		{"unknown pull", token, `{"Repository":"acme/infra","PR":42}`, 404, "not found"},
		{"path traversal", token, `{"Repository":"acme/infra","PR":1,"Paths":[{"Directory":"../etc"}]}`, 400, ".."},
		{"bad workspace", token, `{"Repository":"acme/infra","PR":1,"Paths":[{"Directory":"staging","Workspace":"a b"}]}`, 400, "workspace"},
		{"flag injection", token, `{"Repository":"acme/infra","PR":1,"Projects":["x -- -chdir=/"]}`, 400, ""},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			status, out := postAPI(t, e.m.URL+"/api/v1/plan", c.header, c.body)
			if status != c.status || !strings.Contains(out.Error, c.errSub) {
				t.Fatalf("status %d error %q; want %d containing %q", status, out.Error, c.status, c.errSub)
			}
		})
	}
	var jobs []atoll.Job
	getJSON(t, e.m.URL+"/api/v1/jobs", &jobs)
	if len(jobs) != 1 {
		t.Fatalf("rejected API calls ran jobs: %+v", jobs)
	}

	status, out := postAPI(t, e.m.URL+"/api/v1/plan", token, body)
	if status != 200 || out.Failed || len(out.Jobs) != 1 || out.Jobs[0].Kind != atoll.JobPlan || out.Jobs[0].Summary == nil || out.Jobs[0].Summary.Add != 2 {
		t.Fatalf("API plan = %d %+v", status, out)
	}
	// Atlantis's own path and the bearer header work too.
	status, out = postAPI(t, e.m.URL+"/api/apply", map[string]string{"Authorization": "Bearer api-secret-for-tests"}, body)
	if status != 200 || out.Failed || len(out.Jobs) != 1 || out.Jobs[0].Kind != atoll.JobApply || out.Jobs[0].State != atoll.JobSucceeded {
		t.Fatalf("API apply = %d %+v", status, out)
	}
	mustContain(t, "apply comment", e.gh.pullComments(1)[len(e.gh.pullComments(1))-1], "Apply complete!")

	// Applying again finds nothing to apply, and says so.
	status, out = postAPI(t, e.m.URL+"/api/v1/apply", token, body)
	if status != 200 || out.Failed || len(out.Jobs) != 0 || !strings.HasPrefix(out.Message, "Nothing to apply") {
		t.Fatalf("API apply with nothing to apply = %d %+v; want 200, no jobs, a Nothing to apply message", status, out)
	}
	// A JSON client must say so: a form or text/plain body is refused.
	status, out = postAPI(t, e.m.URL+"/api/v1/plan", map[string]string{"X-Atlantis-Token": "api-secret-for-tests", "Content-Type": "text/plain"}, body)
	if status != http.StatusUnsupportedMediaType || !strings.Contains(out.Error, "application/json") {
		t.Fatalf("text/plain API call = %d %+v; want 415", status, out)
	}
}
