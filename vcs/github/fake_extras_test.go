package github_test

import (
	"encoding/base64"
	"encoding/json"
	"fmt"
	"net/http"
	"slices"
	"strconv"
	"strings"
)

// fakeTeam is a team of the octocat organization: its slug, its parent's
// slug ("" for a top-level team) and its direct members' logins.
type fakeTeam struct {
	Slug, Parent string
	Members      []string
}

// teamsPageSize is how many teams the fake answers per page whatever the
// query's first: 100 asks, so that paging is exercised with few teams.
var teamsPageSize = 2

// extraRoutes adds the reaction and git ref endpoints, with GitHub's
// answers: 201 and the reaction (200 when it exists), 422 for an unknown
// content; 204 for a deleted ref, 422 "Reference does not exist" for a
// missing one.
func (f *fakeGitHub) extraRoutes(mux *http.ServeMux, repo string) {
	mux.HandleFunc("POST "+repo+"/issues/comments/{id}/reactions", func(w http.ResponseWriter, r *http.Request) {
		var in struct{ Content string }
		json.NewDecoder(r.Body).Decode(&in)
		valid := []string{"+1", "-1", "laugh", "confused", "heart", "hooray", "rocket", "eyes"}
		if !slices.Contains(valid, in.Content) {
			writeJSON(w, 422, map[string]any{"message": "Validation Failed", "errors": []map[string]any{
				{"resource": "Reaction", "code": "custom", "field": "content", "message": "content is not included in the list"}}})
			return
		}
		f.mu.Lock()
		defer f.mu.Unlock()
		found := false
		for _, c := range f.comments {
			found = found || fmt.Sprint(c["id"]) == r.PathValue("id")
		}
		if !found {
			notFound(w)
			return
		}
		for _, re := range f.reactions {
			if re["comment_id"] == r.PathValue("id") && re["content"] == in.Content {
				writeJSON(w, 200, re)
				return
			}
		}
		f.nextID++
		re := map[string]any{"id": f.nextID, "node_id": fmt.Sprintf("REA_%d", f.nextID), "content": in.Content,
			"user": map[string]any{"login": "atoll-bot", "id": 7, "type": "User"}, "created_at": "2026-11-22T22:00:00Z", "comment_id": r.PathValue("id")}
		f.reactions = append(f.reactions, re)
		writeJSON(w, 201, re)
	})
	mux.HandleFunc("DELETE "+repo+"/git/refs/heads/{branch...}", func(w http.ResponseWriter, r *http.Request) {
		f.mu.Lock()
		defer f.mu.Unlock()
		if !f.refs[r.PathValue("branch")] {
			writeJSON(w, 422, map[string]any{"message": "Reference does not exist", "documentation_url": "https://docs.github.com/rest/git/refs#delete-a-reference", "status": "422"})
			return
		}
		delete(f.refs, r.PathValue("branch"))
		w.WriteHeader(http.StatusNoContent)
	})
}

// teamsQuery answers the organization teams query as GitHub does: the
// teams with a member among userLogins, each with its ancestors, paged
// with opaque cursors; an unknown organization is data.organization null
// with a NOT_FOUND error.
func (f *fakeGitHub) teamsQuery(w http.ResponseWriter, body []byte) {
	var in struct {
		Query     string
		Variables struct {
			Org    string
			Login  string
			Cursor *string
		}
	}
	json.Unmarshal(body, &in)
	if !strings.Contains(in.Query, "userLogins: [$login]") || !strings.Contains(in.Query, "ancestors(") {
		writeJSON(w, 200, map[string]any{"errors": []map[string]any{{"message": "unexpected query"}}})
		return
	}
	if !strings.EqualFold(in.Variables.Org, owner) {
		writeJSON(w, 200, map[string]any{"data": map[string]any{"organization": nil}, "errors": []map[string]any{{
			"type": "NOT_FOUND", "path": []string{"organization"}, "message": fmt.Sprintf("Could not resolve to an Organization with the login of '%s'.", in.Variables.Org)}}})
		return
	}
	f.mu.Lock()
	teams := append([]fakeTeam{}, f.teams...)
	f.mu.Unlock()
	parent := map[string]string{}
	for _, t := range teams {
		parent[t.Slug] = t.Parent
	}
	var nodes []map[string]any
	for _, t := range teams {
		if !slices.ContainsFunc(t.Members, func(m string) bool { return strings.EqualFold(m, in.Variables.Login) }) {
			continue
		}
		ancestors := []map[string]any{}
		for p := parent[t.Slug]; p != ""; p = parent[p] {
			ancestors = append(ancestors, map[string]any{"slug": p})
		}
		nodes = append(nodes, map[string]any{"slug": t.Slug, "ancestors": map[string]any{"nodes": ancestors}})
	}
	start := 0
	if in.Variables.Cursor != nil {
		raw, _ := base64.StdEncoding.DecodeString(*in.Variables.Cursor)
		start, _ = strconv.Atoi(strings.TrimPrefix(string(raw), "cursor:"))
	}
	end := min(start+teamsPageSize, len(nodes))
	start = min(start, end)
	page := map[string]any{"hasNextPage": end < len(nodes), "endCursor": base64.StdEncoding.EncodeToString([]byte("cursor:" + strconv.Itoa(end)))}
	writeJSON(w, 200, map[string]any{"data": map[string]any{"organization": map[string]any{
		"teams": map[string]any{"nodes": append([]map[string]any{}, nodes[start:end]...), "pageInfo": page}}}})
}
