package github_test

import (
	"bytes"
	"context"
	"log/slog"
	"strings"
	"testing"

	ghp "github.com/atollhq/atoll/vcs/github"
	"github.com/atollhq/atoll/vcs/github/githubtest"
)

const headSHA = "6dcb09b5b57875f334f61aebed695e2e4193db5e"

// bypassProvider is a token Provider on f with the mergeable bypass set to
// bypass, status name name and the other instances' names ignore, logging
// into the returned buffer.
func bypassProvider(t *testing.T, f *fakeGitHub, bypass bool, name string, ignore ...string) (*ghp.Provider, *bytes.Buffer) {
	t.Helper()
	var logs bytes.Buffer
	p, err := ghp.New(ghp.Config{APIURL: f.URL + "/", User: "atoll-bot", Token: "ghp_secrettoken", WebhookSecret: "s3cret",
		AllowMergeableBypassApply: bypass, StatusName: name, IgnoreStatusNames: ignore, Logger: slog.New(slog.NewTextHandler(&logs, nil))})
	if err != nil {
		t.Fatal(err)
	}
	return p, &logs
}

// fakeProtection is what the mergeable bypass reads: the base branch's
// classic protection (required nil: "Branch not protected", empty:
// "Required status checks not enabled"; protectionStatus, when not 0,
// answers it with that status) and ruleset rules, the head commit's
// statuses and the pull request's review decision ("" answers null).
type fakeProtection struct {
	branch           string
	required         []string
	rules            []map[string]any
	statuses         []map[string]any
	reviewDecision   string
	protectionStatus int
}

func (f *fakeGitHub) setProtection(p fakeProtection) {
	f.SetProtection(fullName, githubtest.Protection{Branch: p.branch, Required: p.required, Rules: p.rules, Status: p.protectionStatus})
	for _, st := range p.statuses {
		f.AddStatus(githubtest.Status{Repo: fullName, SHA: headSHA, Context: st["context"].(string), State: st["state"].(string)})
	}
	f.updatePull(func(pr *githubtest.Pull) { pr.ReviewDecision = p.reviewDecision })
}

func status(context, state string) map[string]any {
	return map[string]any{"context": context, "state": state}
}

func TestGetPullMergeableBypassApply(t *testing.T) {
	cases := []struct {
		name     string
		state    string // mergeable_state
		bypass   bool
		status   string   // --vcs-status-name; "" is the default
		ignore   []string // --ignore-vcs-status-names
		prot     fakeProtection
		checkRun map[string]any
		want     bool
	}{
		{name: "blocked only by apply", state: "blocked", bypass: true, prot: fakeProtection{
			required: []string{"atlantis/apply", "atlantis/apply: dir1/default", "ci/test"},
			statuses: []map[string]any{status("ci/test", "success"), status("atlantis/apply", "pending"), status("atlantis/plan", "success")}}, want: true},
		{name: "apply required but absent", state: "blocked", bypass: true, prot: fakeProtection{
			required: []string{"atlantis/apply"}}, want: true},
		{name: "another required check failed", state: "blocked", bypass: true, prot: fakeProtection{
			required: []string{"atlantis/apply", "ci/lint"},
			statuses: []map[string]any{status("ci/lint", "failure")}}, want: false},
		{name: "another required check missing", state: "blocked", bypass: true, prot: fakeProtection{
			required: []string{"atlantis/apply", "ci/lint"}}, want: false},
		{name: "required check passed as a check run", state: "blocked", bypass: true, prot: fakeProtection{
			required: []string{"atlantis/apply", "build"}},
			checkRun: map[string]any{"name": "build", "head_sha": headSHA, "status": "completed", "conclusion": "success"}, want: true},
		{name: "required check run failed", state: "blocked", bypass: true, prot: fakeProtection{
			required: []string{"atlantis/apply", "build"}},
			checkRun: map[string]any{"name": "build", "head_sha": headSHA, "status": "completed", "conclusion": "failure"}, want: false},
		{name: "review required", state: "blocked", bypass: true, prot: fakeProtection{
			required: []string{"atlantis/apply"}, reviewDecision: "REVIEW_REQUIRED"}, want: false},
		{name: "approved", state: "blocked", bypass: true, prot: fakeProtection{
			required: []string{"atlantis/apply"}, reviewDecision: "APPROVED"}, want: true},
		{name: "ruleset requires apply only", state: "blocked", bypass: true, prot: fakeProtection{rules: []map[string]any{
			{"type": "deletion"},
			{"type": "required_status_checks", "parameters": map[string]any{"strict_required_status_checks_policy": false,
				"required_status_checks": []map[string]any{{"context": "atlantis/apply"}}}}}}, want: true},
		{name: "ruleset requires another check", state: "blocked", bypass: true, prot: fakeProtection{rules: []map[string]any{
			{"type": "required_status_checks", "parameters": map[string]any{"strict_required_status_checks_policy": false,
				"required_status_checks": []map[string]any{{"context": "atlantis/apply"}, {"context": "ci/test", "integration_id": 1}}}}}}, want: false},
		{name: "ruleset requires approvals not given", state: "blocked", bypass: true, prot: fakeProtection{rules: []map[string]any{
			{"type": "pull_request", "parameters": map[string]any{"required_approving_review_count": 1, "dismiss_stale_reviews_on_push": false,
				"require_code_owner_review": false, "require_last_push_approval": false, "required_review_thread_resolution": false}}}}, want: false},
		{name: "ruleset rule not judged", state: "blocked", bypass: true, prot: fakeProtection{rules: []map[string]any{
			{"type": "required_deployments", "parameters": map[string]any{"required_deployment_environments": []string{"prod"}}}}}, want: false},
		{name: "custom status name", state: "blocked", bypass: true, status: "infra", prot: fakeProtection{
			required: []string{"infra/apply"}}, want: true},
		{name: "other instance's apply is not ours", state: "blocked", bypass: true, status: "infra", prot: fakeProtection{
			required: []string{"atlantis/apply"}}, want: false},
		{name: "lookalike context", state: "blocked", bypass: true, prot: fakeProtection{
			required: []string{"atlantis/applyx"}}, want: false},
		{name: "protected without required checks", state: "blocked", bypass: true, prot: fakeProtection{
			required: []string{}}, want: true},
		{name: "not protected, ruleset requires apply", state: "blocked", bypass: true, prot: fakeProtection{rules: []map[string]any{
			{"type": "required_status_checks", "parameters": map[string]any{"strict_required_status_checks_policy": true,
				"required_status_checks": []map[string]any{{"context": "atlantis/apply: dir1/default"}}}}}}, want: true},
		{name: "other instance ignored", state: "blocked", bypass: true, ignore: []string{"staging", "prod"}, prot: fakeProtection{
			required: []string{"atlantis/apply", "staging/plan", "staging/apply", "prod/apply: dir1/default", "prod"},
			statuses: []map[string]any{status("staging/plan", "failure")}}, want: true},
		{name: "other instance ignored, own plan still required", state: "blocked", bypass: true, ignore: []string{"staging"}, prot: fakeProtection{
			required: []string{"atlantis/plan", "staging/plan"},
			statuses: []map[string]any{status("atlantis/plan", "pending")}}, want: false},
		{name: "unlisted instance not ignored", state: "blocked", bypass: true, ignore: []string{"staging"}, prot: fakeProtection{
			required: []string{"staging/apply", "prod/apply"}}, want: false},
		{name: "ignored name is the prefix before the slash, not a string prefix", state: "blocked", bypass: true, ignore: []string{"stag"}, prot: fakeProtection{
			required: []string{"staging/apply"}}, want: false},
		{name: "ignored names in a ruleset", state: "blocked", bypass: true, ignore: []string{"staging"}, prot: fakeProtection{rules: []map[string]any{
			{"type": "required_status_checks", "parameters": map[string]any{"strict_required_status_checks_policy": false,
				"required_status_checks": []map[string]any{{"context": "atlantis/apply"}, {"context": "staging/apply"}}}}}}, want: true},
		{name: "ignored names without the bypass", state: "blocked", bypass: false, ignore: []string{"staging"}, prot: fakeProtection{
			required: []string{"staging/apply"}}, want: false},
		{name: "not blocked: clean", state: "clean", bypass: true, prot: fakeProtection{required: []string{"ci/lint"}}, want: true},
		{name: "not blocked: dirty", state: "dirty", bypass: true, prot: fakeProtection{required: []string{"atlantis/apply"}}, want: false},
		{name: "flag off", state: "blocked", bypass: false, prot: fakeProtection{required: []string{"atlantis/apply"}}, want: false},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			f := newFake(t)
			f.setPullFields(t, map[string]any{"mergeable": true, "mergeable_state": tc.state})
			tc.prot.branch = "main"
			f.setProtection(tc.prot)
			if tc.checkRun != nil {
				f.AddCheckRun(tc.checkRun)
			}
			p, _ := bypassProvider(t, f, tc.bypass, tc.status, tc.ignore...)
			got, err := p.GetPull(context.Background(), helloWorld, pullNum)
			if err != nil {
				t.Fatal(err)
			}
			if got.Mergeable != tc.want {
				t.Errorf("Mergeable = %v, want %v", got.Mergeable, tc.want)
			}
			// Without the flag, or when GitHub does not say blocked, the
			// protection is not even read.
			protCalls := len(f.callsTo("GET", "/repos/octocat/Hello-World/branches/main/protection/required_status_checks"))
			if bypassing := tc.bypass && tc.state == "blocked"; !bypassing && protCalls > 0 {
				t.Errorf("protection read %d times, want none", protCalls)
			}
		})
	}
}

// A token that may not read branch protection cannot tell what blocks:
// not mergeable, and the log says why. GitHub answers 403, or a bare 404
// where the repository hides its protection.
func TestGetPullMergeableBypassForbidden(t *testing.T) {
	for _, tc := range []struct {
		status int
		msg    string
	}{{403, "Resource not accessible by integration"}, {404, "Not Found"}} {
		t.Run(tc.msg, func(t *testing.T) {
			f := newFake(t)
			f.setPullFields(t, map[string]any{"mergeable": true, "mergeable_state": "blocked"})
			f.setProtection(fakeProtection{branch: "main", required: []string{"atlantis/apply"}, protectionStatus: tc.status})
			p, logs := bypassProvider(t, f, true, "")
			got, err := p.GetPull(context.Background(), helloWorld, pullNum)
			if err != nil {
				t.Fatal(err)
			}
			if got.Mergeable {
				t.Error("Mergeable = true, want false when the protection cannot be read")
			}
			for _, want := range []string{"level=ERROR", "not mergeable", "required status checks", tc.msg} {
				if !strings.Contains(logs.String(), want) {
					t.Errorf("log lacks %q:\n%s", want, logs.String())
				}
			}
			if strings.Contains(logs.String(), "ghp_secrettoken") {
				t.Error("log carries the token")
			}
		})
	}
}
