package azuretest

import (
	"crypto/sha1"
	"encoding/hex"
	"encoding/json"
	"fmt"
	"net/http"
	"net/url"
	"slices"
	"strconv"
	"strings"
	"time"
)

func writeJSON(w http.ResponseWriter, code int, v any) {
	w.Header().Set("Content-Type", "application/json; charset=utf-8; api-version=7.1")
	w.WriteHeader(code)
	json.NewEncoder(w).Encode(v)
}

// writeError answers with Azure's error body.
func writeError(w http.ResponseWriter, code int, typeKey, msg string) {
	writeJSON(w, code, map[string]any{
		"$id": "1", "innerException": nil, "message": msg,
		"typeName": "Microsoft.TeamFoundation.Git.Server." + typeKey + ", Microsoft.TeamFoundation.Git.Server",
		"typeKey":  typeKey, "errorCode": 0, "eventId": 3000,
	})
}

// page slices a list by $skip and $top into Azure's collection envelope.
func page(list []any, skipS, topS string, defTop int) map[string]any {
	skip, _ := strconv.Atoi(skipS)
	top, err := strconv.Atoi(topS)
	if err != nil || top <= 0 {
		top = defTop
	}
	skip = min(max(skip, 0), len(list))
	list = list[skip:min(len(list), skip+top)]
	if list == nil {
		list = []any{}
	}
	return map[string]any{"count": len(list), "value": list}
}

func sortedPulls(r *repoState) []*pullState {
	var out []*pullState
	for _, p := range r.pulls {
		out = append(out, p)
	}
	// Azure lists the newest first.
	slices.SortFunc(out, func(a, b *pullState) int { return b.Number - a.Number })
	return out
}

func jsonTime(t time.Time) string { return t.UTC().Format("2006-01-02T15:04:05.000Z") }

// fakeUUID derives a stable GUID from s.
func fakeUUID(s string) string {
	h := sha1.Sum([]byte(s))
	x := hex.EncodeToString(h[:16])
	return x[0:8] + "-" + x[8:12] + "-" + x[12:16] + "-" + x[16:20] + "-" + x[20:32]
}

func fakeSHA(s string) string {
	h := sha1.Sum([]byte(s))
	return hex.EncodeToString(h[:])
}

func cutPrefixFold(s, prefix string) (string, bool) {
	if len(s) >= len(prefix) && strings.EqualFold(s[:len(prefix)], prefix) {
		return s[len(prefix):], true
	}
	return s, false
}

// Enumerations, in their numeric order: Azure accepts either the name or
// the number, and answers with the name.
var (
	threadStatuses  = []string{"unknown", "active", "fixed", "wontFix", "closed", "byDesign", "pending"}
	commentTypes    = []string{"unknown", "text", "codeChange", "system"}
	statusStates    = []string{"notSet", "pending", "succeeded", "failed", "error", "notApplicable"}
	pullStatuses    = []string{"notSet", "active", "abandoned", "completed", "all"}
	mergeStrategies = []string{"", "noFastForward", "squash", "rebase", "rebaseMerge"}
)

// enumString is the canonical name of an enumeration value given as a
// name or a number: def when absent, "" when not a member.
func enumString(v any, names []string, def string) string {
	switch x := v.(type) {
	case nil:
		return def
	case string:
		for _, n := range names {
			if n != "" && strings.EqualFold(n, x) {
				return n
			}
		}
	case float64:
		if i := int(x); float64(i) == x && i >= 0 && i < len(names) {
			return names[i]
		}
	}
	return ""
}

func (s *Server) orgURL(r *repoState) string { return s.URL + "/" + url.PathEscape(r.org) }

func (s *Server) apiRepoURL(r *repoState) string {
	return s.orgURL(r) + "/" + r.projectID + "/_apis/git/repositories/" + r.id
}

func (s *Server) webURL(r *repoState) string {
	return s.orgURL(r) + "/" + url.PathEscape(r.project) + "/_git/" + url.PathEscape(r.name)
}

func (s *Server) identityJSON(uniqueName string) map[string]any {
	id := fakeUUID("identity:" + strings.ToLower(uniqueName))
	return map[string]any{
		"displayName": uniqueName, "url": s.srv.URL + "/_apis/Identities/" + id, "id": id,
		"uniqueName": uniqueName, "imageUrl": s.srv.URL + "/_api/_common/identityImage?id=" + id,
		"descriptor": "aad." + fakeSHA("descriptor:" + id)[:32],
	}
}

func (s *Server) repoJSON(r *repoState) map[string]any {
	remote := r.remoteURL
	if remote == "" {
		remote = s.webURL(r)
	}
	return map[string]any{
		"id": r.id, "name": r.name, "url": s.apiRepoURL(r),
		"project":   map[string]any{"id": r.projectID, "name": r.project, "state": "wellFormed", "visibility": "private"},
		"remoteUrl": remote, "webUrl": s.webURL(r), "isDisabled": false, "isInMaintenance": false,
	}
}

func (h *handler) pullJSON(p *pullState) map[string]any {
	s, r := h.s, h.repo
	apiURL := s.apiRepoURL(r) + "/pullRequests/" + strconv.Itoa(p.Number)
	commit := func(sha string) map[string]any {
		return map[string]any{"commitId": sha, "url": s.apiRepoURL(r) + "/commits/" + sha}
	}
	out := map[string]any{
		"repository": s.repoJSON(r), "pullRequestId": p.Number, "codeReviewId": p.Number, "status": p.Status,
		"createdBy": s.identityJSON(p.Author), "creationDate": jsonTime(p.created), "title": p.Title, "description": "",
		"sourceRefName": p.SourceRef, "targetRefName": p.TargetRef, "mergeStatus": p.MergeStatus, "isDraft": p.Draft,
		"mergeId":               fakeUUID(fmt.Sprintf("merge:%s:%d:%s", r.id, p.Number, p.HeadSHA)),
		"lastMergeSourceCommit": commit(p.HeadSHA), "lastMergeTargetCommit": commit(p.BaseSHA),
		"lastMergeCommit": commit(fakeSHA("merge:" + p.HeadSHA + p.BaseSHA)),
		"url":             apiURL, "supportsIterations": true,
		"artifactId": fmt.Sprintf("vstfs:///Git/PullRequestId/%s%%2f%s%%2f%d", r.projectID, r.id, p.Number),
	}
	reviewers := []any{}
	for _, rv := range p.Reviewers {
		j := s.identityJSON(rv.UniqueName)
		j["reviewerUrl"] = apiURL + "/reviewers/" + j["id"].(string)
		j["vote"] = rv.Vote
		j["hasDeclined"], j["isFlagged"] = false, false
		if rv.IsContainer {
			j["isContainer"] = true
		}
		reviewers = append(reviewers, j)
	}
	out["reviewers"] = reviewers
	// Azure DevOps leaves labels out when there are none.
	if len(p.Labels) > 0 {
		labels := []any{}
		for _, name := range p.Labels {
			id := fakeUUID("label:" + r.projectID + ":" + strings.ToLower(name))
			labels = append(labels, map[string]any{"id": id, "name": name, "active": true,
				"url": s.srv.URL + "/_apis/tagging/" + r.projectID + "/tags/" + id})
		}
		out["labels"] = labels
	}
	if p.Fork {
		out["forkSource"] = map[string]any{"name": p.SourceRef, "repository": map[string]any{
			"id": fakeUUID("fork:" + r.id), "name": r.name + "-fork", "project": map[string]any{"id": fakeUUID("forkproject"), "name": "fork"},
		}}
	}
	if p.Status != "active" && !p.closed.IsZero() {
		out["closedDate"] = jsonTime(p.closed)
		out["closedBy"] = s.identityJSON(p.ClosedBy)
	}
	if !p.queued.IsZero() {
		out["completionQueueTime"] = jsonTime(p.queued)
	}
	if p.Status == "active" && p.MergeStatus == "failure" && p.MergeFailure != "" {
		out["mergeFailureMessage"] = p.MergeFailure
		out["mergeFailureType"] = "unknown"
	}
	if (p.Status == "completed" || !p.queued.IsZero()) && p.MergeStrategy != "" {
		out["completionOptions"] = map[string]any{"mergeStrategy": p.MergeStrategy, "deleteSourceBranch": p.DeleteSourceBranch}
	}
	return out
}

func (s *Server) threadJSON(r *repoState, p *pullState, th *Thread) map[string]any {
	comments := []any{}
	for _, c := range th.Comments {
		comments = append(comments, s.commentJSON(r, p, th, c))
	}
	return map[string]any{
		"pullRequestThreadContext": nil, "id": th.ID, "publishedDate": jsonTime(p.created), "lastUpdatedDate": jsonTime(p.created),
		"comments": comments, "status": th.Status, "threadContext": nil, "properties": map[string]any{}, "identities": nil,
		"isDeleted": th.Deleted,
		"_links":    map[string]any{"self": map[string]any{"href": s.apiRepoURL(r) + "/pullRequests/" + strconv.Itoa(p.Number) + "/threads/" + strconv.Itoa(th.ID)}},
	}
}

func (s *Server) commentJSON(r *repoState, p *pullState, th *Thread, c Comment) map[string]any {
	now := jsonTime(p.created)
	return map[string]any{
		"id": c.ID, "parentCommentId": c.ParentID, "author": s.identityJSON(c.Author), "content": c.Content,
		"publishedDate": now, "lastUpdatedDate": now, "lastContentUpdatedDate": now, "commentType": c.CommentType,
		"isDeleted": c.Deleted, "usersLiked": []any{},
		"_links": map[string]any{"self": map[string]any{"href": s.apiRepoURL(r) + "/pullRequests/" + strconv.Itoa(p.Number) +
			"/threads/" + strconv.Itoa(th.ID) + "/comments/" + strconv.Itoa(c.ID)}},
	}
}
