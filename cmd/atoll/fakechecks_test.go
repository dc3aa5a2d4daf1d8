package main_test

import (
	"encoding/json"
	"fmt"
	"net/http"
	"strings"
)

// The fake's GitHub App and Checks API endpoints. The App's installation
// token is gh-test-token, the token every other endpoint (and git) accepts.

// appJWT reports whether r is an App-level call authenticated with the
// App's JWT (Bearer <header.payload.signature>), which GitHub accepts only
// on /app endpoints and the installation lookup.
func appJWT(r *http.Request) bool {
	tok, ok := strings.CutPrefix(r.Header.Get("Authorization"), "Bearer ")
	appPath := strings.HasPrefix(r.URL.Path, "/app") || strings.HasSuffix(r.URL.Path, "/installation")
	return ok && appPath && strings.Count(tok, ".") == 2
}

func (f *fakeGitHub) checksRoutes(mux *http.ServeMux) {
	mux.HandleFunc("GET /repos/{owner}/{repo}/installation", func(w http.ResponseWriter, r *http.Request) {
		writeJSONResp(w, map[string]any{"id": 42, "app_id": 99})
	})
	mux.HandleFunc("POST /app/installations/{id}/access_tokens", func(w http.ResponseWriter, r *http.Request) {
		w.WriteHeader(http.StatusCreated)
		writeJSONResp(w, map[string]any{"token": "gh-test-token", "expires_at": "2099-01-01T00:00:00Z"})
	})
	mux.HandleFunc("GET /app", func(w http.ResponseWriter, r *http.Request) {
		writeJSONResp(w, map[string]any{"id": 99, "slug": "atoll-bot", "name": "Atoll"})
	})
	mux.HandleFunc("POST /repos/{owner}/{repo}/check-runs", func(w http.ResponseWriter, r *http.Request) {
		var in map[string]any
		if err := json.NewDecoder(r.Body).Decode(&in); err != nil || in["name"] == nil || in["head_sha"] == nil {
			w.WriteHeader(http.StatusUnprocessableEntity)
			writeJSONResp(w, map[string]any{"message": "Invalid request."})
			return
		}
		f.mu.Lock()
		in["id"] = int64(5000 + len(f.checkRuns))
		in["app"] = map[string]any{"id": 99}
		if in["conclusion"] != nil {
			in["status"] = "completed"
		}
		f.checkRuns = append(f.checkRuns, in)
		f.mu.Unlock()
		w.WriteHeader(http.StatusCreated)
		writeJSONResp(w, in)
	})
	mux.HandleFunc("PATCH /repos/{owner}/{repo}/check-runs/{id}", func(w http.ResponseWriter, r *http.Request) {
		var in map[string]any
		json.NewDecoder(r.Body).Decode(&in)
		f.mu.Lock()
		defer f.mu.Unlock()
		for _, cr := range f.checkRuns {
			if fmt.Sprint(cr["id"]) == r.PathValue("id") {
				for k, v := range in {
					cr[k] = v
				}
				if in["conclusion"] != nil {
					cr["status"] = "completed"
				}
				writeJSONResp(w, cr)
				return
			}
		}
		http.Error(w, `{"message":"Not Found"}`, http.StatusNotFound)
	})
	mux.HandleFunc("GET /repos/{owner}/{repo}/commits/{sha}/check-runs", func(w http.ResponseWriter, r *http.Request) {
		name := r.URL.Query().Get("check_name")
		f.mu.Lock()
		defer f.mu.Unlock()
		runs := []map[string]any{}
		for i := len(f.checkRuns) - 1; i >= 0; i-- {
			if cr := f.checkRuns[i]; cr["head_sha"] == r.PathValue("sha") && (name == "" || cr["name"] == name) {
				runs = append(runs, cr)
			}
		}
		writeJSONResp(w, map[string]any{"total_count": len(runs), "check_runs": runs})
	})
}

// checkRun returns a copy of the latest check run named name on sha and
// how many runs of that name were created there.
func (f *fakeGitHub) checkRun(sha, name string) (run map[string]any, created int) {
	f.mu.Lock()
	defer f.mu.Unlock()
	for _, cr := range f.checkRuns {
		if cr["head_sha"] == sha && cr["name"] == name {
			run, created = map[string]any{}, created+1
			for k, v := range cr {
				run[k] = v
			}
		}
	}
	return run, created
}

// checkOutput returns a check run's output title and summary.
func checkOutput(run map[string]any) (title, summary string) {
	out, _ := run["output"].(map[string]any)
	title, _ = out["title"].(string)
	summary, _ = out["summary"].(string)
	return title, summary
}
