package githubtest

import (
	"encoding/json"
	"fmt"
	"net/http"
	"strconv"
	"strings"
)

// Pull is a pull request as a test sets it up and reads it back. GET
// answers PullFixture with the fields set here.
type Pull struct {
	Repo   string // owner/name
	Number int
	// State is open (the default) or closed; a merge closes it and sets
	// Merged.
	State  string
	Merged bool
	// HeadSHA, HeadRef, BaseSHA and BaseRef keep the fixture's when "".
	HeadSHA, HeadRef, BaseSHA, BaseRef string
	// HeadRepo is the head's repository (owner/name) when it is a fork;
	// "" is Repo.
	HeadRepo string
	// Labels are the pull request's labels by name; nil keeps the
	// fixture's.
	Labels []string
	// Files are the changed files, as GET .../files answers them (see
	// ModifiedFiles).
	Files []map[string]any
	// Reviews are the reviews, as GET .../reviews answers them; a
	// dismissal sets a review's state to DISMISSED.
	Reviews []map[string]any
	// ReviewDecision is what GraphQL's reviewDecision answers ("": null).
	ReviewDecision string
	// Fields are top-level fields of the answer set last, over everything
	// else: "mergeable", "mergeable_state", "draft", ...
	Fields map[string]any
}

// ModifiedFiles returns names as GitHub lists modified files.
func ModifiedFiles(names ...string) []map[string]any {
	out := []map[string]any{}
	for _, n := range names {
		out = append(out, map[string]any{"filename": n, "status": "modified", "additions": 1, "deletions": 1, "changes": 2})
	}
	return out
}

// Merge is a pull request merged through the API.
type Merge struct {
	Repo   string
	Pull   int
	Method string // merge_method as sent ("" if none)
	Body   map[string]any
}

// Status is a commit status, created through the API or by AddStatus.
type Status struct {
	Repo, SHA, State, Context, Description, TargetURL string
}

func pullKey(repo string, n int) string { return strings.ToLower(repo) + "#" + strconv.Itoa(n) }

func repoOf(r *http.Request) string { return r.PathValue("owner") + "/" + r.PathValue("repo") }

// knownRepoLocked reports whether the server has a repository: one with a
// pull request. s.mu is held.
func (s *Server) knownRepoLocked(repo string) bool {
	for _, p := range s.pulls {
		if strings.EqualFold(p.Repo, repo) {
			return true
		}
	}
	return false
}

// SetPull creates or replaces a pull request.
func (s *Server) SetPull(p Pull) {
	s.mu.Lock()
	defer s.mu.Unlock()
	if p.State == "" {
		p.State = "open"
	}
	s.pulls[pullKey(p.Repo, p.Number)] = &p
}

// UpdatePull changes a pull request in place with fn; it reports whether
// the pull request exists.
func (s *Server) UpdatePull(repo string, number int, fn func(*Pull)) bool {
	s.mu.Lock()
	defer s.mu.Unlock()
	p, ok := s.pulls[pullKey(repo, number)]
	if ok {
		fn(p)
	}
	return ok
}

// GetPull returns a copy of a pull request.
func (s *Server) GetPull(repo string, number int) (Pull, bool) {
	s.mu.Lock()
	defer s.mu.Unlock()
	p, ok := s.pulls[pullKey(repo, number)]
	if !ok {
		return Pull{}, false
	}
	cp := *p
	cp.Reviews = nil
	for _, rv := range p.Reviews {
		cp.Reviews = append(cp.Reviews, copyMap(rv))
	}
	return cp, true
}

// Merges returns the merges of a repository's pull request number.
func (s *Server) Merges(repo string, number int) []Merge {
	s.mu.Lock()
	defer s.mu.Unlock()
	var out []Merge
	for _, m := range s.merges {
		if m.Pull == number && strings.EqualFold(m.Repo, repo) {
			out = append(out, m)
		}
	}
	return out
}

// AddStatus adds a commit status, as another tool would set it.
func (s *Server) AddStatus(st Status) {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.statuses = append(s.statuses, st)
}

// Statuses returns every status set on sha of a repository, in order ("" sha: all).
func (s *Server) Statuses(repo, sha string) []Status {
	s.mu.Lock()
	defer s.mu.Unlock()
	var out []Status
	for _, st := range s.statuses {
		if strings.EqualFold(st.Repo, repo) && (sha == "" || st.SHA == sha) {
			out = append(out, st)
		}
	}
	return out
}

// ClearStatuses forgets the statuses set so far.
func (s *Server) ClearStatuses() {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.statuses = nil
}

// pull is the pull request of r's path, locked; nil after a 404.
func (s *Server) pullLocked(w http.ResponseWriter, r *http.Request) *Pull {
	n, _ := strconv.Atoi(r.PathValue("n"))
	p, ok := s.pulls[pullKey(repoOf(r), n)]
	if !ok {
		notFound(w)
		return nil
	}
	return p
}

func (s *Server) pullRoutes() {
	s.mux.HandleFunc("GET /repos/{owner}/{repo}/pulls/{n}", func(w http.ResponseWriter, r *http.Request) {
		s.mu.Lock()
		defer s.mu.Unlock()
		if p := s.pullLocked(w, r); p != nil {
			writeJSON(w, http.StatusOK, s.renderPull(p))
		}
	})
	s.mux.HandleFunc("GET /repos/{owner}/{repo}/pulls/{n}/files", func(w http.ResponseWriter, r *http.Request) {
		s.mu.Lock()
		p := s.pullLocked(w, r)
		var files []map[string]any
		if p != nil {
			files = append(files, p.Files...)
		}
		s.mu.Unlock()
		if p != nil {
			s.paginate(w, r, files)
		}
	})
	s.mux.HandleFunc("GET /repos/{owner}/{repo}/pulls/{n}/reviews", func(w http.ResponseWriter, r *http.Request) {
		s.mu.Lock()
		p := s.pullLocked(w, r)
		var reviews []map[string]any
		if p != nil {
			for _, rv := range p.Reviews {
				reviews = append(reviews, copyMap(rv))
			}
		}
		s.mu.Unlock()
		if p != nil {
			s.paginate(w, r, reviews)
		}
	})
	// A dismissal needs a message and an approval or a change request:
	// GitHub answers 422 for any other review.
	s.mux.HandleFunc("PUT /repos/{owner}/{repo}/pulls/{n}/reviews/{id}/dismissals", func(w http.ResponseWriter, r *http.Request) {
		var in struct{ Message string }
		json.NewDecoder(r.Body).Decode(&in)
		s.mu.Lock()
		defer s.mu.Unlock()
		p := s.pullLocked(w, r)
		if p == nil {
			return
		}
		for _, rv := range p.Reviews {
			if fmt.Sprint(rv["id"]) != r.PathValue("id") {
				continue
			}
			if in.Message == "" || (rv["state"] != "APPROVED" && rv["state"] != "CHANGES_REQUESTED") {
				writeJSON(w, http.StatusUnprocessableEntity, map[string]any{"message": "Can not dismiss a " + strings.ToLower(fmt.Sprint(rv["state"])) + " pull request review"})
				return
			}
			rv["state"] = "DISMISSED"
			writeJSON(w, http.StatusOK, rv)
			return
		}
		notFound(w)
	})
	// Merging an open pull request closes it; any other is 405 "not
	// mergeable".
	s.mux.HandleFunc("PUT /repos/{owner}/{repo}/pulls/{n}/merge", func(w http.ResponseWriter, r *http.Request) {
		var body map[string]any
		json.NewDecoder(r.Body).Decode(&body)
		s.mu.Lock()
		defer s.mu.Unlock()
		p := s.pullLocked(w, r)
		if p == nil {
			return
		}
		if p.State != "open" {
			writeJSON(w, http.StatusMethodNotAllowed, map[string]any{"message": "Pull Request is not mergeable", "documentation_url": docs + "/pulls/pulls#merge-a-pull-request", "status": "405"})
			return
		}
		p.State, p.Merged = "closed", true
		method, _ := body["merge_method"].(string)
		s.merges = append(s.merges, Merge{Repo: p.Repo, Pull: p.Number, Method: method, Body: body})
		sha := p.HeadSHA
		if sha == "" {
			sha = "6dcb09b5b57875f334f61aebed695e2e4193db5e"
		}
		writeJSON(w, http.StatusOK, map[string]any{"sha": sha, "merged": true, "message": "Pull Request successfully merged"})
	})
	s.mux.HandleFunc("POST /repos/{owner}/{repo}/statuses/{sha}", func(w http.ResponseWriter, r *http.Request) {
		var in map[string]any
		if err := json.NewDecoder(r.Body).Decode(&in); err != nil {
			writeJSON(w, http.StatusBadRequest, map[string]any{"message": "Problems parsing JSON"})
			return
		}
		str := func(k string) string { v, _ := in[k].(string); return v }
		s.mu.Lock()
		if !s.knownRepoLocked(repoOf(r)) {
			s.mu.Unlock()
			notFound(w)
			return
		}
		s.statuses = append(s.statuses, Status{Repo: repoOf(r), SHA: r.PathValue("sha"), State: str("state"), Context: str("context"),
			Description: str("description"), TargetURL: str("target_url")})
		s.mu.Unlock()
		in["id"] = 1
		in["url"] = "https://api.github.com/repos/" + repoOf(r) + "/statuses/" + r.PathValue("sha")
		writeJSON(w, http.StatusCreated, in)
	})
}

// renderPull is p as GET answers it; s.mu is held.
func (s *Server) renderPull(p *Pull) map[string]any {
	var body map[string]any
	json.Unmarshal(pullFixture, &body)
	body["number"], body["state"], body["merged"] = p.Number, p.State, p.Merged
	head, base := body["head"].(map[string]any), body["base"].(map[string]any)
	set := func(m map[string]any, k, v string) {
		if v != "" {
			m[k] = v
		}
	}
	set(head, "sha", p.HeadSHA)
	set(head, "ref", p.HeadRef)
	set(base, "sha", p.BaseSHA)
	set(base, "ref", p.BaseRef)
	base["repo"].(map[string]any)["full_name"] = p.Repo
	headRepo := p.HeadRepo
	if headRepo == "" {
		headRepo = p.Repo
	}
	head["repo"].(map[string]any)["full_name"] = headRepo
	if p.Labels != nil {
		labels := []any{}
		for _, l := range p.Labels {
			labels = append(labels, map[string]any{"name": l, "color": "ededed", "default": false})
		}
		body["labels"] = labels
	}
	for k, v := range p.Fields {
		body[k] = v
	}
	return body
}
