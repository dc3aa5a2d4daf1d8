package githubtest

import (
	"encoding/json"
	"fmt"
	"net/http"
	"strconv"
	"strings"
)

// Protection is what the mergeable bypass reads of a repository's base
// branch, in GitHub's wire format: the classic protection's required
// checks of Branch (nil: "Branch not protected", empty: "Required status
// checks not enabled") and its ruleset rules.
type Protection struct {
	Branch   string
	Required []string
	Rules    []map[string]any
	// Status, when not 0, answers the protection endpoint with that status
	// and GitHub's message for it (403: an App without the Administration
	// permission).
	Status int
}

// SetProtection sets a repository's branch protection.
func (s *Server) SetProtection(repo string, p Protection) {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.protect[strings.ToLower(repo)] = p
}

// CheckRuns returns copies of the check runs on sha, oldest first, as
// GitHub stores them.
func (s *Server) CheckRuns(sha string) []map[string]any {
	s.mu.Lock()
	defer s.mu.Unlock()
	var out []map[string]any
	for _, cr := range s.checkRuns {
		if sha == "" || cr["head_sha"] == sha {
			out = append(out, copyMap(cr))
		}
	}
	return out
}

func (s *Server) routes() {
	s.pullRoutes()
	s.commentRoutes()
	s.checkRoutes()
	s.protectionRoutes()
	s.appRoutes()
	s.mux.HandleFunc("/", func(w http.ResponseWriter, r *http.Request) { notFound(w) })
}

// checkRoutes: check runs created (422 without a name or head_sha),
// patched in place (a conclusion completes them, as GitHub does), listed
// per commit newest first, by check_name and app_id.
func (s *Server) checkRoutes() {
	s.mux.HandleFunc("POST /repos/{owner}/{repo}/check-runs", func(w http.ResponseWriter, r *http.Request) {
		var in map[string]any
		if err := json.NewDecoder(r.Body).Decode(&in); err != nil || in["name"] == nil || in["head_sha"] == nil {
			writeJSON(w, http.StatusUnprocessableEntity, map[string]any{"message": "Invalid request.", "status": "422"})
			return
		}
		s.mu.Lock()
		if !s.knownRepoLocked(repoOf(r)) {
			s.mu.Unlock()
			notFound(w)
			return
		}
		in["id"] = s.newIDLocked()
		in["app"] = map[string]any{"id": s.app.id, "slug": s.app.slug}
		if in["conclusion"] != nil {
			in["status"] = "completed"
		} else if in["status"] == nil {
			in["status"] = "queued"
		}
		s.checkRuns = append(s.checkRuns, in)
		out := copyMap(in)
		s.mu.Unlock()
		writeJSON(w, http.StatusCreated, out)
	})
	s.mux.HandleFunc("PATCH /repos/{owner}/{repo}/check-runs/{id}", func(w http.ResponseWriter, r *http.Request) {
		var in map[string]any
		json.NewDecoder(r.Body).Decode(&in)
		s.mu.Lock()
		defer s.mu.Unlock()
		for _, cr := range s.checkRuns {
			if fmt.Sprint(cr["id"]) == r.PathValue("id") {
				for k, v := range in {
					cr[k] = v
				}
				if in["conclusion"] != nil {
					cr["status"] = "completed"
				}
				writeJSON(w, http.StatusOK, cr)
				return
			}
		}
		notFound(w)
	})
	s.mux.HandleFunc("GET /repos/{owner}/{repo}/commits/{sha}/check-runs", func(w http.ResponseWriter, r *http.Request) {
		q := r.URL.Query()
		s.mu.Lock()
		defer s.mu.Unlock()
		runs := []map[string]any{}
		for i := len(s.checkRuns) - 1; i >= 0; i-- { // newest first
			cr := s.checkRuns[i]
			if cr["head_sha"] != r.PathValue("sha") || (q.Get("check_name") != "" && cr["name"] != q.Get("check_name")) ||
				(q.Get("app_id") != "" && q.Get("app_id") != strconv.FormatInt(s.app.id, 10)) {
				continue
			}
			runs = append(runs, cr)
		}
		writeJSON(w, http.StatusOK, map[string]any{"total_count": len(runs), "check_runs": runs})
	})
}

func (s *Server) protectionRoutes() {
	s.mux.HandleFunc("GET /repos/{owner}/{repo}/branches/{branch}/protection/required_status_checks", func(w http.ResponseWriter, r *http.Request) {
		s.mu.Lock()
		p := s.protect[strings.ToLower(repoOf(r))]
		s.mu.Unlock()
		const doc = docs + "/branches/branch-protection#get-status-checks-protection"
		switch {
		case p.Status == http.StatusForbidden:
			writeJSON(w, http.StatusForbidden, map[string]any{"message": "Resource not accessible by integration", "documentation_url": doc, "status": "403"})
			return
		case p.Status != 0:
			writeJSON(w, p.Status, map[string]any{"message": http.StatusText(p.Status)})
			return
		case p.Required != nil && len(p.Required) == 0:
			writeJSON(w, http.StatusNotFound, map[string]any{"message": "Required status checks not enabled", "documentation_url": doc, "status": "404"})
			return
		case p.Required == nil || r.PathValue("branch") != p.Branch:
			writeJSON(w, http.StatusNotFound, map[string]any{"message": "Branch not protected", "documentation_url": doc, "status": "404"})
			return
		}
		checks := []map[string]any{}
		for _, c := range p.Required {
			checks = append(checks, map[string]any{"context": c, "app_id": nil})
		}
		base := "https://api.github.com/repos/" + repoOf(r) + "/branches/" + p.Branch + "/protection/required_status_checks"
		writeJSON(w, http.StatusOK, map[string]any{"url": base, "strict": true, "contexts": p.Required,
			"contexts_url": base + "/contexts", "checks": checks})
	})
	s.mux.HandleFunc("GET /repos/{owner}/{repo}/rules/branches/{branch}", func(w http.ResponseWriter, r *http.Request) {
		s.mu.Lock()
		p := s.protect[strings.ToLower(repoOf(r))]
		s.mu.Unlock()
		rules := []map[string]any{}
		if r.PathValue("branch") == p.Branch {
			for _, rule := range p.Rules {
				out := map[string]any{"ruleset_source_type": "Repository", "ruleset_source": repoOf(r), "ruleset_id": 42}
				for k, v := range rule {
					out[k] = v
				}
				rules = append(rules, out)
			}
		}
		writeJSON(w, http.StatusOK, rules)
	})
	// The combined status: the latest status of each context on the ref;
	// its state is success only if all of them are.
	s.mux.HandleFunc("GET /repos/{owner}/{repo}/commits/{ref}/status", func(w http.ResponseWriter, r *http.Request) {
		s.mu.Lock()
		defer s.mu.Unlock()
		state := "success"
		statuses := []map[string]any{}
		index := map[string]int{}
		for _, st := range s.statuses {
			if st.SHA != r.PathValue("ref") || !strings.EqualFold(st.Repo, repoOf(r)) {
				continue
			}
			out := map[string]any{"id": 1, "url": "https://api.github.com/repos/" + repoOf(r) + "/statuses/" + st.SHA,
				"state": st.State, "context": st.Context, "description": st.Description, "target_url": st.TargetURL,
				"created_at": "2026-11-22T22:00:00Z", "updated_at": "2026-11-22T22:00:00Z"}
			if i, ok := index[st.Context]; ok {
				statuses[i] = out
				continue
			}
			index[st.Context] = len(statuses)
			statuses = append(statuses, out)
		}
		for _, st := range statuses {
			if st["state"] != "success" {
				state = "pending"
			}
		}
		writeJSON(w, http.StatusOK, map[string]any{"state": state, "statuses": statuses, "sha": r.PathValue("ref"),
			"total_count": len(statuses), "repository": map[string]any{"full_name": repoOf(r)}})
	})
}

// appRoutes: the App's installation on every repository, its installation
// tokens (which the server then accepts) and the App itself; and the
// authenticated user.
func (s *Server) appRoutes() {
	s.mux.HandleFunc("GET /repos/{owner}/{repo}/installation", func(w http.ResponseWriter, r *http.Request) {
		s.mu.Lock()
		defer s.mu.Unlock()
		writeJSON(w, http.StatusOK, map[string]any{"id": s.app.installationID, "app_id": s.app.id})
	})
	s.mux.HandleFunc("POST /app/installations/{id}/access_tokens", func(w http.ResponseWriter, r *http.Request) {
		s.mu.Lock()
		tok := s.app.token
		if tok == "" {
			tok = "ghs_installationtoken-" + r.PathValue("id")
		}
		s.tokens[tok] = true
		s.mu.Unlock()
		writeJSON(w, http.StatusCreated, map[string]any{"token": tok, "expires_at": "2099-01-01T00:00:00Z"})
	})
	s.mux.HandleFunc("GET /app", func(w http.ResponseWriter, r *http.Request) {
		s.mu.Lock()
		defer s.mu.Unlock()
		writeJSON(w, http.StatusOK, map[string]any{"id": s.app.id, "slug": s.app.slug, "name": "Atoll"})
	})
	s.mux.HandleFunc("GET /user", func(w http.ResponseWriter, r *http.Request) {
		s.mu.Lock()
		defer s.mu.Unlock()
		writeJSON(w, http.StatusOK, map[string]any{"login": s.bot, "id": 7, "type": "User"})
	})
}

// AddCheckRun adds a check run as another App would create it (with its
// name, head_sha, status and conclusion); it is given an id.
func (s *Server) AddCheckRun(run map[string]any) {
	s.mu.Lock()
	defer s.mu.Unlock()
	run = copyMap(run)
	if run["id"] == nil {
		run["id"] = s.newIDLocked()
	}
	s.checkRuns = append(s.checkRuns, run)
}
