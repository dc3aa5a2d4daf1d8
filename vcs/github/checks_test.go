package github_test

import (
	"context"
	"encoding/json"
	"strings"
	"testing"

	"github.com/atollhq/atoll/vcs"
	ghp "github.com/atollhq/atoll/vcs/github"
	"github.com/atollhq/atoll/vcs/github/githubtest"
)

const checkSHA = "6dcb09b5b57875f334f61aebed695e2e4193db5e"

func checksProvider(t *testing.T, f *fakeGitHub) *ghp.Provider {
	t.Helper()
	p, err := ghp.New(ghp.Config{APIURL: f.URL + "/", AppID: 99, AppKeyFile: appKeyFile(t), WebhookSecret: secret, Checks: true})
	if err != nil {
		t.Fatal(err)
	}
	return p
}

// GitHub refuses check runs from tokens: asking for them without an App
// fails when the provider is built, not on the first plan.
func TestChecksNeedApp(t *testing.T) {
	_, err := ghp.New(ghp.Config{Token: "ghp_x", WebhookSecret: secret, Checks: true})
	if err == nil || !strings.Contains(err.Error(), "GitHub App") {
		t.Fatalf("New with Checks and a token: %v; want an error naming the GitHub App", err)
	}
}

// decode returns a recorded call's JSON body.
func decode(t *testing.T, c githubtest.Call) map[string]any {
	t.Helper()
	var m map[string]any
	if err := json.Unmarshal(c.Body, &m); err != nil {
		t.Fatal(err)
	}
	return m
}

// With Checks a status is a check run: created in progress, completed in
// place, created anew when a completed run is set pending again; no commit
// status is set.
func TestCheckRunLifecycle(t *testing.T) {
	f := newFake(t)
	p := checksProvider(t, f)
	ctx := context.Background()
	const name = "atlantis/plan: dir/default"
	set := func(st vcs.Status) {
		t.Helper()
		st.Context = name
		if err := p.SetStatus(ctx, helloWorld, checkSHA, st); err != nil {
			t.Fatal(err)
		}
	}
	set(vcs.Status{State: vcs.StatusPending, Description: "Plan in progress...", TargetURL: "https://atoll.example.com/jobs/7"})
	set(vcs.Status{State: vcs.StatusSuccess, Description: "1 to add, 0 to change, 0 to destroy.", TargetURL: "https://atoll.example.com/jobs/7",
		Details: "**+1 ~0 -0**\n\n```\n# null_resource.a will be created\n```\n"})

	creates := f.callsTo("POST", "/repos/octocat/Hello-World/check-runs")
	if len(creates) != 1 {
		t.Fatalf("%d check runs created; want 1", len(creates))
	}
	if !strings.HasPrefix(creates[0].Auth, "token ghs_installationtoken") {
		t.Errorf("check run created with %q; want the installation token", creates[0].Auth)
	}
	c := decode(t, creates[0])
	if c["name"] != name || c["head_sha"] != checkSHA || c["status"] != "in_progress" || c["conclusion"] != nil ||
		c["details_url"] != "https://atoll.example.com/jobs/7" {
		t.Errorf("created %v", c)
	}
	id := f.CheckRuns("")[0]["id"]
	patches := f.callsTo("PATCH", "/repos/octocat/Hello-World/check-runs/"+jsonNum(id))
	if len(patches) != 1 {
		t.Fatalf("%d patches of run %v; want 1 (calls %v)", len(patches), id, f.allCalls())
	}
	u := decode(t, patches[0])
	out, _ := u["output"].(map[string]any)
	if u["status"] != "completed" || u["conclusion"] != "success" || u["completed_at"] == nil ||
		out["title"] != "1 to add, 0 to change, 0 to destroy." || !strings.Contains(out["summary"].(string), "**+1 ~0 -0**") {
		t.Errorf("update %v", u)
	}
	if n := len(f.callsTo("POST", "/repos/octocat/Hello-World/statuses/"+checkSHA)); n != 0 {
		t.Errorf("%d commit statuses set alongside check runs; want none", n)
	}

	// A new plan of the same commit is a new run; its failure patches it.
	set(vcs.Status{State: vcs.StatusPending, Description: "Plan in progress..."})
	set(vcs.Status{State: vcs.StatusError, Description: "interrupted"})
	if n := len(f.callsTo("POST", "/repos/octocat/Hello-World/check-runs")); n != 2 {
		t.Fatalf("%d check runs created; want 2", n)
	}
	second := f.CheckRuns("")[1]
	if second["status"] != "completed" || second["conclusion"] != "failure" {
		t.Errorf("second run %v; want completed with failure", second)
	}
	if out, _ := second["output"].(map[string]any); out["summary"] != "interrupted" {
		t.Errorf("second run output %v; want the description as summary", second["output"])
	}
}

// A run begun before a restart is found by name on the commit and
// completed in place, not duplicated.
func TestCheckRunFoundAfterRestart(t *testing.T) {
	f := newFake(t)
	ctx := context.Background()
	st := vcs.Status{State: vcs.StatusPending, Context: "atlantis/plan", Description: "Planning 1 project(s)..."}
	if err := checksProvider(t, f).SetStatus(ctx, helloWorld, checkSHA, st); err != nil {
		t.Fatal(err)
	}
	st.State, st.Description = vcs.StatusFailure, "0/1 projects planned successfully."
	if err := checksProvider(t, f).SetStatus(ctx, helloWorld, checkSHA, st); err != nil {
		t.Fatal(err)
	}
	if n := len(f.callsTo("POST", "/repos/octocat/Hello-World/check-runs")); n != 1 {
		t.Fatalf("%d check runs created; want 1", n)
	}
	lists := f.callsTo("GET", "/repos/octocat/Hello-World/commits/"+checkSHA+"/check-runs")
	if len(lists) != 2 || !strings.Contains(lists[1].Query, "check_name=atlantis%2Fplan") || !strings.Contains(lists[1].Query, "app_id=99") {
		t.Fatalf("lookups %v; want one per fresh provider, by name and app", lists)
	}
	if cr := f.CheckRuns("")[0]; cr["status"] != "completed" || cr["conclusion"] != "failure" {
		t.Errorf("run %v; want completed with failure", cr)
	}
}

func jsonNum(v any) string {
	b, _ := json.Marshal(v)
	return string(b)
}
