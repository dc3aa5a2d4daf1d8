package github_test

import (
	"net/http"
)

// fakeProtection is what the mergeable bypass reads, in GitHub's wire
// format: the classic protection's required checks of the base branch
// (nil: "Branch not protected", empty: "Required status checks not
// enabled"), its ruleset rules, the head commit's
// statuses and the pull request's review decision ("" answers null).
type fakeProtection struct {
	branch         string
	required       []string
	rules          []map[string]any
	statuses       []map[string]any
	reviewDecision string
	// protectionStatus, when not 0, answers the protection endpoint with
	// that status and GitHub's message for it (403: an App without the
	// Administration permission).
	protectionStatus int
}

func (f *fakeGitHub) protectionRoutes(mux *http.ServeMux, repo string) {
	mux.HandleFunc("GET "+repo+"/branches/{branch}/protection/required_status_checks", func(w http.ResponseWriter, r *http.Request) {
		f.mu.Lock()
		defer f.mu.Unlock()
		p := f.protection
		switch {
		case p.protectionStatus == http.StatusForbidden:
			writeJSON(w, 403, map[string]any{"message": "Resource not accessible by integration",
				"documentation_url": "https://docs.github.com/rest/branches/branch-protection#get-status-checks-protection", "status": "403"})
			return
		case p.protectionStatus != 0:
			writeJSON(w, p.protectionStatus, map[string]any{"message": http.StatusText(p.protectionStatus)})
			return
		case p.required != nil && len(p.required) == 0:
			writeJSON(w, 404, map[string]any{"message": "Required status checks not enabled",
				"documentation_url": "https://docs.github.com/rest/branches/branch-protection#get-status-checks-protection", "status": "404"})
			return
		case p.required == nil || r.PathValue("branch") != p.branch:
			writeJSON(w, 404, map[string]any{"message": "Branch not protected",
				"documentation_url": "https://docs.github.com/rest/branches/branch-protection#get-status-checks-protection", "status": "404"})
			return
		}
		checks := []map[string]any{}
		for _, c := range p.required {
			checks = append(checks, map[string]any{"context": c, "app_id": nil})
		}
		base := "https://api.github.com/repos/octocat/Hello-World/branches/" + p.branch + "/protection/required_status_checks"
		writeJSON(w, 200, map[string]any{"url": base, "strict": true, "contexts": p.required,
			"contexts_url": base + "/contexts", "checks": checks})
	})
	mux.HandleFunc("GET "+repo+"/rules/branches/{branch}", func(w http.ResponseWriter, r *http.Request) {
		f.mu.Lock()
		defer f.mu.Unlock()
		rules := []map[string]any{}
		if r.PathValue("branch") == f.protection.branch {
			for _, rule := range f.protection.rules {
				out := map[string]any{"ruleset_source_type": "Repository", "ruleset_source": "octocat/Hello-World", "ruleset_id": 42}
				for k, v := range rule {
					out[k] = v
				}
				rules = append(rules, out)
			}
		}
		writeJSON(w, 200, rules)
	})
	mux.HandleFunc("GET "+repo+"/commits/{ref}/status", func(w http.ResponseWriter, r *http.Request) {
		f.mu.Lock()
		defer f.mu.Unlock()
		state := "success"
		statuses := []map[string]any{}
		for _, s := range f.protection.statuses {
			out := map[string]any{"id": 1, "url": "https://api.github.com/repos/octocat/Hello-World/statuses/" + r.PathValue("ref"),
				"description": "", "target_url": "", "created_at": "2026-11-22T22:00:00Z", "updated_at": "2026-11-22T22:00:00Z"}
			for k, v := range s {
				out[k] = v
			}
			if out["state"] != "success" && state == "success" {
				state = "pending"
			}
			statuses = append(statuses, out)
		}
		writeJSON(w, 200, map[string]any{"state": state, "statuses": statuses, "sha": r.PathValue("ref"),
			"total_count": len(statuses), "repository": map[string]any{"full_name": "octocat/Hello-World"}})
	})
}

// reviewDecisionQuery answers the pull request's reviewDecision query.
func (f *fakeGitHub) reviewDecisionQuery(w http.ResponseWriter) {
	f.mu.Lock()
	defer f.mu.Unlock()
	var decision any
	if f.protection.reviewDecision != "" {
		decision = f.protection.reviewDecision
	}
	writeJSON(w, 200, map[string]any{"data": map[string]any{"repository": map[string]any{
		"pullRequest": map[string]any{"reviewDecision": decision}}}})
}
