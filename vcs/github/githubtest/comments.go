package githubtest

import (
	"encoding/base64"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"slices"
	"strconv"
	"strings"
	"unicode/utf8"
)

// MaxCommentBody is the longest comment body GitHub takes, in characters:
// longer ones are refused with 422.
const MaxCommentBody = 65536

// Comment is an issue comment on a pull request.
type Comment struct {
	ID     int64
	NodeID string
	Repo   string
	Pull   int
	Author string
	Body   string
	// Minimized is set by GraphQL's minimizeComment.
	Minimized bool
}

// Reaction is a reaction to a comment.
type Reaction struct {
	ID        int64
	CommentID int64
	Content   string
}

// Team is a team of an organization: its slug, its parent's slug ("" for
// a top-level team) and its direct members' logins.
type Team struct {
	Slug, Parent string
	Members      []string
}

// TeamsPageSize is how many teams the server answers per page whatever the
// query's first asks: paging is exercised with few teams.
const TeamsPageSize = 2

// AddComment adds a comment as its author would post it, and returns it
// with its id. A comment with the id of an existing one replaces it: a
// test can post the comment a webhook names.
func (s *Server) AddComment(c Comment) Comment {
	s.mu.Lock()
	defer s.mu.Unlock()
	return *s.addCommentLocked(c)
}

func (s *Server) addCommentLocked(c Comment) *Comment {
	if c.ID == 0 {
		c.ID = s.newIDLocked()
	}
	if c.NodeID == "" {
		c.NodeID = fmt.Sprintf("IC_node%d", c.ID)
	}
	for i, old := range s.comments {
		if old.ID == c.ID {
			s.comments[i] = &c
			return &c
		}
	}
	s.comments = append(s.comments, &c)
	return &c
}

// Comments returns the comments on a repository's pull request, in order.
func (s *Server) Comments(repo string, pull int) []Comment {
	s.mu.Lock()
	defer s.mu.Unlock()
	var out []Comment
	for _, c := range s.comments {
		if c.Pull == pull && strings.EqualFold(c.Repo, repo) {
			out = append(out, *c)
		}
	}
	return out
}

// Reactions returns the reactions to a comment, in order.
func (s *Server) Reactions(commentID int64) []Reaction {
	s.mu.Lock()
	defer s.mu.Unlock()
	var out []Reaction
	for _, re := range s.reactions {
		if re.CommentID == commentID {
			out = append(out, re)
		}
	}
	return out
}

// AllReactions returns every reaction, in order.
func (s *Server) AllReactions() []Reaction {
	s.mu.Lock()
	defer s.mu.Unlock()
	return slices.Clone(s.reactions)
}

// RefuseReactions makes reactions answer 403, as GitHub answers a token
// that may not write issues.
func (s *Server) RefuseReactions(refuse bool) {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.refuseReactions = refuse
}

// AnyIssue makes the issue comment endpoints take any issue number of any
// repository as if it existed, instead of answering 404 for one that is no
// pull request the server knows: for tests whose webhooks name pull
// requests the server was never told about.
func (s *Server) AnyIssue(on bool) {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.anyIssue = on
}

// issueLocked is the repository and number of the issue of r's path; ok
// is false after a 404.
func (s *Server) issueLocked(w http.ResponseWriter, r *http.Request) (repo string, n int, ok bool) {
	if s.anyIssue {
		n, _ = strconv.Atoi(r.PathValue("n"))
		if p, found := s.pulls[pullKey(repoOf(r), n)]; found {
			return p.Repo, n, true
		}
		return repoOf(r), n, true
	}
	if p := s.pullLocked(w, r); p != nil {
		return p.Repo, p.Number, true
	}
	return "", 0, false
}

// SetBranch makes a branch of a repository exist or not.
func (s *Server) SetBranch(repo, branch string, exists bool) {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.branches[strings.ToLower(repo)+"\x00"+branch] = exists
}

// ProtectBranch makes a branch undeletable (422, as GitHub answers).
func (s *Server) ProtectBranch(repo, branch string) {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.protected[strings.ToLower(repo)+"\x00"+branch] = true
}

// BranchExists reports whether a branch exists.
func (s *Server) BranchExists(repo, branch string) bool {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.branches[strings.ToLower(repo)+"\x00"+branch]
}

// DeletedBranches returns the branches of a repository deleted through the
// API, in order.
func (s *Server) DeletedBranches(repo string) []string {
	s.mu.Lock()
	defer s.mu.Unlock()
	var out []string
	for _, d := range s.deleted {
		if r, b, _ := strings.Cut(d, "\x00"); r == strings.ToLower(repo) {
			out = append(out, b)
		}
	}
	return out
}

// SetTeams sets the teams of an organization.
func (s *Server) SetTeams(org string, teams ...Team) {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.teams[strings.ToLower(org)] = teams
}

func (s *Server) commentJSON(c *Comment) map[string]any {
	return map[string]any{
		"id":       c.ID,
		"node_id":  c.NodeID,
		"body":     c.Body,
		"user":     map[string]any{"login": c.Author, "id": 1, "type": "User"},
		"html_url": fmt.Sprintf("https://github.com/%s/pull/%d#issuecomment-%d", c.Repo, c.Pull, c.ID),
	}
}

// commentLocked is the comment of r's path in its repository, nil after a
// 404.
func (s *Server) commentLocked(w http.ResponseWriter, r *http.Request) *Comment {
	for _, c := range s.comments {
		if fmt.Sprint(c.ID) == r.PathValue("id") && strings.EqualFold(c.Repo, repoOf(r)) {
			return c
		}
	}
	notFound(w)
	return nil
}

func (s *Server) commentRoutes() {
	s.mux.HandleFunc("GET /repos/{owner}/{repo}/issues/{n}/comments", func(w http.ResponseWriter, r *http.Request) {
		s.mu.Lock()
		repo, n, ok := s.issueLocked(w, r)
		var out []map[string]any
		if ok {
			for _, c := range s.comments {
				if c.Pull == n && strings.EqualFold(c.Repo, repo) {
					out = append(out, s.commentJSON(c))
				}
			}
		}
		s.mu.Unlock()
		if ok {
			s.paginate(w, r, out)
		}
	})
	s.mux.HandleFunc("POST /repos/{owner}/{repo}/issues/{n}/comments", func(w http.ResponseWriter, r *http.Request) {
		var in struct{ Body string }
		if err := json.NewDecoder(r.Body).Decode(&in); err != nil {
			writeJSON(w, http.StatusBadRequest, map[string]any{"message": "Problems parsing JSON"})
			return
		}
		if utf8.RuneCountInString(in.Body) > MaxCommentBody {
			writeJSON(w, http.StatusUnprocessableEntity, map[string]any{"message": "Validation Failed", "errors": []map[string]any{
				{"resource": "IssueComment", "code": "custom", "field": "body", "message": "body is too long (maximum is 65536 characters)"}}})
			return
		}
		s.mu.Lock()
		defer s.mu.Unlock()
		repo, n, ok := s.issueLocked(w, r)
		if !ok {
			return
		}
		c := s.addCommentLocked(Comment{Repo: repo, Pull: n, Author: s.bot, Body: in.Body})
		writeJSON(w, http.StatusCreated, s.commentJSON(c))
	})
	s.mux.HandleFunc("PATCH /repos/{owner}/{repo}/issues/comments/{id}", func(w http.ResponseWriter, r *http.Request) {
		var in struct{ Body string }
		json.NewDecoder(r.Body).Decode(&in)
		s.mu.Lock()
		defer s.mu.Unlock()
		if c := s.commentLocked(w, r); c != nil {
			c.Body = in.Body
			writeJSON(w, http.StatusOK, s.commentJSON(c))
		}
	})
	// Reactions: 201 and the reaction, 200 when it exists, 422 for an
	// unknown content, 404 for an unknown comment.
	s.mux.HandleFunc("POST /repos/{owner}/{repo}/issues/comments/{id}/reactions", func(w http.ResponseWriter, r *http.Request) {
		var in struct{ Content string }
		json.NewDecoder(r.Body).Decode(&in)
		valid := []string{"+1", "-1", "laugh", "confused", "heart", "hooray", "rocket", "eyes"}
		if !slices.Contains(valid, in.Content) {
			writeJSON(w, http.StatusUnprocessableEntity, map[string]any{"message": "Validation Failed", "errors": []map[string]any{
				{"resource": "Reaction", "code": "custom", "field": "content", "message": "content is not included in the list"}}})
			return
		}
		s.mu.Lock()
		defer s.mu.Unlock()
		if s.refuseReactions {
			writeJSON(w, http.StatusForbidden, map[string]any{"message": "Resource not accessible by integration", "documentation_url": docs, "status": "403"})
			return
		}
		c := s.commentLocked(w, r)
		if c == nil {
			return
		}
		reaction := func(re Reaction) map[string]any {
			return map[string]any{"id": re.ID, "node_id": fmt.Sprintf("REA_%d", re.ID), "content": re.Content,
				"user": map[string]any{"login": s.bot, "id": 7, "type": "User"}, "created_at": "2026-11-22T22:00:00Z"}
		}
		for _, re := range s.reactions {
			if re.CommentID == c.ID && re.Content == in.Content {
				writeJSON(w, http.StatusOK, reaction(re))
				return
			}
		}
		re := Reaction{ID: s.newIDLocked(), CommentID: c.ID, Content: in.Content}
		s.reactions = append(s.reactions, re)
		writeJSON(w, http.StatusCreated, reaction(re))
	})
	// Branch deletion: 204; 422 "Reference does not exist" for a missing
	// branch, "Cannot delete this protected branch" for a protected one.
	s.mux.HandleFunc("DELETE /repos/{owner}/{repo}/git/refs/heads/{branch...}", func(w http.ResponseWriter, r *http.Request) {
		s.mu.Lock()
		defer s.mu.Unlock()
		key := strings.ToLower(repoOf(r)) + "\x00" + r.PathValue("branch")
		const doc = docs + "/git/refs#delete-a-reference"
		switch {
		case s.protected[key]:
			unprocessable(w, "Cannot delete this protected branch", doc)
		case !s.branches[key]:
			unprocessable(w, "Reference does not exist", doc)
		default:
			delete(s.branches, key)
			s.deleted = append(s.deleted, key)
			w.WriteHeader(http.StatusNoContent)
		}
	})
	s.mux.HandleFunc("POST /graphql", func(w http.ResponseWriter, r *http.Request) {
		body, _ := io.ReadAll(r.Body)
		var in struct {
			Query     string
			Variables map[string]any
		}
		json.Unmarshal(body, &in)
		switch {
		case strings.Contains(in.Query, "reviewDecision"):
			s.reviewDecisionQuery(w, in.Variables)
		case strings.Contains(in.Query, "teams("):
			s.teamsQuery(w, body)
		case strings.Contains(in.Query, "minimizeComment"):
			s.minimize(w, in.Variables)
		default:
			writeJSON(w, http.StatusOK, map[string]any{"errors": []map[string]any{{"message": "unexpected query"}}})
		}
	})
}

// minimize answers minimizeComment: the comment with the node id is
// minimized (one unknown to the server is too: the server knows only the
// comments made through it or AddComment).
func (s *Server) minimize(w http.ResponseWriter, vars map[string]any) {
	id := fmt.Sprint(vars["id"])
	s.mu.Lock()
	for _, c := range s.comments {
		if c.NodeID == id {
			c.Minimized = true
		}
	}
	s.mu.Unlock()
	writeJSON(w, http.StatusOK, map[string]any{"data": map[string]any{"minimizeComment": map[string]any{"minimizedComment": map[string]any{"isMinimized": true}}}})
}

// reviewDecisionQuery answers a pull request's reviewDecision.
func (s *Server) reviewDecisionQuery(w http.ResponseWriter, vars map[string]any) {
	s.mu.Lock()
	defer s.mu.Unlock()
	var decision any
	n, _ := strconv.Atoi(fmt.Sprint(vars["number"]))
	for _, p := range s.pulls {
		if p.Number == n && strings.EqualFold(p.Repo, fmt.Sprint(vars["owner"])+"/"+fmt.Sprint(vars["name"])) && p.ReviewDecision != "" {
			decision = p.ReviewDecision
		}
	}
	writeJSON(w, http.StatusOK, map[string]any{"data": map[string]any{"repository": map[string]any{
		"pullRequest": map[string]any{"reviewDecision": decision}}}})
}

// teamsQuery answers the organization teams query as GitHub does: the
// teams with a member among userLogins, each with its ancestors, paged
// with opaque cursors (TeamsPageSize a page); an organization the server
// does not know (no teams set, no pull request) is data.organization null
// with a NOT_FOUND error.
func (s *Server) teamsQuery(w http.ResponseWriter, body []byte) {
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
		writeJSON(w, http.StatusOK, map[string]any{"errors": []map[string]any{{"message": "unexpected query"}}})
		return
	}
	s.mu.Lock()
	teams, known := s.teams[strings.ToLower(in.Variables.Org)]
	for _, p := range s.pulls {
		owner, _, _ := strings.Cut(p.Repo, "/")
		known = known || strings.EqualFold(owner, in.Variables.Org)
	}
	teams = slices.Clone(teams)
	s.mu.Unlock()
	if !known {
		writeJSON(w, http.StatusOK, map[string]any{"data": map[string]any{"organization": nil}, "errors": []map[string]any{{
			"type": "NOT_FOUND", "path": []string{"organization"}, "message": fmt.Sprintf("Could not resolve to an Organization with the login of '%s'.", in.Variables.Org)}}})
		return
	}
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
	end := min(start+TeamsPageSize, len(nodes))
	start = min(start, end)
	page := map[string]any{"hasNextPage": end < len(nodes), "endCursor": base64.StdEncoding.EncodeToString([]byte("cursor:" + strconv.Itoa(end)))}
	writeJSON(w, http.StatusOK, map[string]any{"data": map[string]any{"organization": map[string]any{
		"teams": map[string]any{"nodes": append([]map[string]any{}, nodes[start:end]...), "pageInfo": page}}}})
}
