package azuretest

import (
	"encoding/json"
	"io"
	"net/http"
	"regexp"
	"strconv"
	"strings"
	"time"
)

// serve routes one request: the virtual directory, then authentication (as
// Azure does, before anything else answers), then the organization's
// resources.
func (s *Server) serve(w http.ResponseWriter, r *http.Request) {
	if path, ok := cutPrefixFold(r.URL.Path, s.vdir+"/"); ok && s.serveGit(w, r, path) {
		return
	}
	body, _ := io.ReadAll(r.Body)
	auth := r.Header.Get("Authorization")
	s.mu.Lock()
	defer s.mu.Unlock()
	s.calls = append(s.calls, Call{Method: r.Method, Path: r.URL.Path, Query: r.URL.RawQuery, Accept: r.Header.Get("Accept"), Auth: auth, Body: body})

	path := r.URL.Path
	if s.vdir != "" {
		rest, ok := cutPrefixFold(path, s.vdir+"/")
		if !ok {
			http.NotFound(w, r)
			return
		}
		path = "/" + rest
	}
	who := s.identity(auth)
	if who == "" {
		// Azure's answer to a missing, expired or revoked credential: a
		// sign-in page with 203 unless the client suppresses the sign-in
		// redirect, else 401 with an HTML page.
		if !strings.EqualFold(r.Header.Get("X-TFS-FedAuthRedirect"), "Suppress") {
			w.Header().Set("Content-Type", "text/html; charset=utf-8")
			w.WriteHeader(http.StatusNonAuthoritativeInfo)
			io.WriteString(w, "<html><head><title>Azure DevOps Services | Sign In</title></head><body>Sign in</body></html>")
			return
		}
		w.Header().Set("WWW-Authenticate", `Bearer authorization_uri=https://login.microsoftonline.com/common, Basic realm="`+s.srv.URL+`/", TFS-Federated`)
		w.Header().Set("Content-Type", "text/html; charset=utf-8")
		w.WriteHeader(http.StatusUnauthorized)
		io.WriteString(w, "<html><head><title>Access Denied</title></head><body>Access Denied: The Personal Access Token used has expired.</body></html>")
		return
	}
	seg := strings.Split(strings.Trim(path, "/"), "/")
	switch {
	case len(seg) == 2 && strings.EqualFold(seg[1], "_apis") && r.Method == http.MethodOptions:
		locs := versionedLocations(s.maxVersion)
		writeJSON(w, http.StatusOK, map[string]any{"count": len(locs), "value": locs})
		return
	case len(seg) >= 3 && strings.EqualFold(seg[1], "_apis") && strings.EqualFold(seg[2], "ResourceAreas") && r.Method == http.MethodGet:
		// As on Azure DevOps Server: every area lives at the organization URL.
		writeJSON(w, http.StatusOK, map[string]any{"count": 0, "value": []any{}})
		return
	}
	if !strings.Contains(r.Header.Get("Accept"), "api-version=") && r.URL.Query().Get("api-version") == "" {
		writeError(w, http.StatusBadRequest, "VssVersionNotSpecifiedException", "No api-version was supplied for the \""+r.Method+"\" request.")
		return
	}
	// ORG/PROJECT/_apis/policy/evaluations (policy.go)
	if len(seg) == 5 && strings.EqualFold(seg[2], "_apis") && strings.EqualFold(seg[3], "policy") && strings.EqualFold(seg[4], "evaluations") && r.Method == http.MethodGet {
		s.policyEvaluations(w, r, seg[0])
		return
	}
	// ORG/PROJECT/_apis/git/repositories/REPO/...
	if len(seg) < 6 || !strings.EqualFold(seg[2], "_apis") || !strings.EqualFold(seg[3], "git") || !strings.EqualFold(seg[4], "repositories") {
		writeError(w, http.StatusNotFound, "RouteNotFoundException", "The controller for path '"+r.URL.Path+"' was not found.")
		return
	}
	repo := s.repos[repoKey(seg[0], seg[1], seg[5])]
	if repo == nil {
		writeError(w, http.StatusNotFound, "GitRepositoryNotFoundException", "TF401019: The Git repository with name or identifier "+seg[5]+" does not exist or you do not have permissions for the operation you are attempting.")
		return
	}
	h := &handler{s: s, w: w, r: r, body: body, who: who, repo: repo}
	h.route(strings.ToLower(strings.Join(seg[6:], "/")))
}

type handler struct {
	s    *Server
	w    http.ResponseWriter
	r    *http.Request
	body []byte
	who  string
	repo *repoState
}

var (
	rePull       = regexp.MustCompile(`^pullrequests/(\d+)$`)
	reIterations = regexp.MustCompile(`^pullrequests/(\d+)/iterations$`)
	reChanges    = regexp.MustCompile(`^pullrequests/(\d+)/iterations/(\d+)/changes$`)
	reThreads    = regexp.MustCompile(`^pullrequests/(\d+)/threads$`)
	reThread     = regexp.MustCompile(`^pullrequests/(\d+)/threads/(\d+)$`)
	reComments   = regexp.MustCompile(`^pullrequests/(\d+)/threads/(\d+)/comments$`)
	reComment    = regexp.MustCompile(`^pullrequests/(\d+)/threads/(\d+)/comments/(\d+)$`)
	rePullStatus = regexp.MustCompile(`^pullrequests/(\d+)/statuses$`)
	reCommitStat = regexp.MustCompile(`^commits/([0-9a-f]{40})/statuses$`)
)

func (h *handler) route(rest string) {
	m := func(re *regexp.Regexp) []int {
		sub := re.FindStringSubmatch(rest)
		if sub == nil {
			return nil
		}
		ids := []int{}
		for _, x := range sub[1:] {
			n, _ := strconv.Atoi(x)
			ids = append(ids, n)
		}
		return ids
	}
	method := h.r.Method
	switch {
	case rest == "pullrequests" && method == http.MethodGet:
		h.listPulls()
	case m(rePull) != nil && method == http.MethodGet:
		if p := h.pull(m(rePull)[0]); p != nil {
			h.pollCompletion(p)
			writeJSON(h.w, http.StatusOK, h.pullJSON(p))
		}
	case m(rePull) != nil && method == http.MethodPatch:
		h.updatePull(m(rePull)[0])
	case m(reIterations) != nil && method == http.MethodGet:
		h.iterations(m(reIterations)[0])
	case m(reChanges) != nil && method == http.MethodGet:
		ids := m(reChanges)
		h.changes(ids[0], ids[1])
	case m(reThreads) != nil && method == http.MethodGet:
		h.listThreads(m(reThreads)[0])
	case m(reThreads) != nil && method == http.MethodPost:
		h.createThread(m(reThreads)[0])
	case m(reThread) != nil && method == http.MethodPatch:
		ids := m(reThread)
		h.updateThread(ids[0], ids[1])
	case m(reComments) != nil && method == http.MethodPost:
		ids := m(reComments)
		h.createComment(ids[0], ids[1])
	case m(reComment) != nil && method == http.MethodPatch:
		ids := m(reComment)
		h.updateComment(ids[0], ids[1], ids[2])
	case m(rePullStatus) != nil && method == http.MethodPost:
		h.createStatus(m(rePullStatus)[0], "")
	case reCommitStat.MatchString(rest) && method == http.MethodPost:
		h.createStatus(0, reCommitStat.FindStringSubmatch(rest)[1])
	default:
		writeError(h.w, http.StatusNotFound, "RouteNotFoundException", "The controller for path '"+h.r.URL.Path+"' was not found.")
	}
}

func (h *handler) pull(number int) *pullState {
	p := h.repo.pulls[number]
	if p == nil {
		writeError(h.w, http.StatusNotFound, "GitPullRequestNotFoundException", "TF401180: The requested pull request was not found.")
	}
	return p
}

// decode reads the JSON body into v, answering 400 when it is not JSON.
func (h *handler) decode(v any) bool {
	if err := json.Unmarshal(h.body, v); err != nil {
		writeError(h.w, http.StatusBadRequest, "InvalidArgumentValueException", "Value cannot be null or invalid JSON: "+err.Error())
		return false
	}
	return true
}

func (h *handler) listPulls() {
	q := h.r.URL.Query()
	status := q.Get("searchCriteria.status")
	if status == "" {
		status = "active"
	}
	var list []any
	for _, p := range sortedPulls(h.repo) {
		if status == "all" || p.Status == status {
			list = append(list, h.pullJSON(p))
		}
	}
	writeJSON(h.w, http.StatusOK, page(list, q.Get("$skip"), q.Get("$top"), 101))
}

func (h *handler) iterations(number int) {
	p := h.pull(number)
	if p == nil {
		return
	}
	var list []any
	for i, it := range p.Iterations {
		reason := "push"
		if i == 0 {
			reason = "create"
		}
		list = append(list, map[string]any{
			"id": it.ID, "description": p.Title, "author": h.s.identityJSON(p.Author),
			"createdDate": jsonTime(p.created), "updatedDate": jsonTime(p.created),
			"sourceRefCommit": map[string]any{"commitId": it.SourceSHA}, "targetRefCommit": map[string]any{"commitId": it.TargetSHA},
			"commonRefCommit": map[string]any{"commitId": it.TargetSHA}, "hasMoreCommits": false, "reason": reason,
		})
	}
	writeJSON(h.w, http.StatusOK, map[string]any{"count": len(list), "value": list})
}

// changes serves an iteration's changes with Azure's paging: $top
// (default 100, at most 2000) and $skip, and nextSkip/nextTop set while
// more remain (0 when not).
func (h *handler) changes(number, iteration int) {
	p := h.pull(number)
	if p == nil {
		return
	}
	if iteration < 1 || iteration > len(p.Iterations) {
		writeError(h.w, http.StatusNotFound, "GitPullRequestIterationNotFoundException", "TF401178: The requested pull request iteration was not found.")
		return
	}
	q := h.r.URL.Query()
	top, _ := strconv.Atoi(q.Get("$top"))
	if top <= 0 {
		top = 100
	}
	top = min(top, 2000)
	skip, _ := strconv.Atoi(q.Get("$skip"))
	var entries []any
	for i, c := range p.Changes {
		if i < skip || len(entries) >= top {
			continue
		}
		path := "/" + strings.TrimPrefix(c.Path, "/")
		item := map[string]any{"objectId": fakeSHA("blob:" + path), "originalObjectId": fakeSHA("old:" + path), "path": path}
		if c.Folder {
			item["isFolder"] = true
			item["gitObjectType"] = "tree"
		}
		typ := c.ChangeType
		if typ == "" {
			typ = "edit"
		}
		e := map[string]any{"changeTrackingId": i + 1, "changeId": i + 1, "item": item, "changeType": typ}
		if c.OriginalPath != "" {
			e["originalPath"] = "/" + strings.TrimPrefix(c.OriginalPath, "/")
		}
		if c.SourceServerItem != "" {
			e["sourceServerItem"] = "/" + strings.TrimPrefix(c.SourceServerItem, "/")
		}
		entries = append(entries, e)
	}
	out := map[string]any{"changeEntries": entries}
	if next := skip + len(entries); next < len(p.Changes) {
		out["nextSkip"], out["nextTop"] = next, top
	} else {
		out["nextSkip"], out["nextTop"] = 0, 0
	}
	writeJSON(h.w, http.StatusOK, out)
}

func (h *handler) listThreads(number int) {
	p := h.pull(number)
	if p == nil {
		return
	}
	var list []any
	for _, th := range p.threads {
		list = append(list, h.s.threadJSON(h.repo, p, th))
	}
	writeJSON(h.w, http.StatusOK, map[string]any{"count": len(list), "value": list})
}

type commentIn struct {
	Content         *string `json:"content"`
	CommentType     any     `json:"commentType"`
	ParentCommentID int     `json:"parentCommentId"`
}

func (h *handler) createThread(number int) {
	p := h.pull(number)
	if p == nil {
		return
	}
	var in struct {
		Comments []commentIn `json:"comments"`
		Status   any         `json:"status"`
	}
	if !h.decode(&in) {
		return
	}
	if len(in.Comments) == 0 {
		writeError(h.w, http.StatusBadRequest, "InvalidArgumentValueException", "The thread must contain at least one comment.")
		return
	}
	th := &Thread{ID: h.s.nextID, Status: enumString(in.Status, threadStatuses, "active")}
	h.s.nextID++
	for i, c := range in.Comments {
		if c.Content == nil {
			writeError(h.w, http.StatusBadRequest, "InvalidArgumentValueException", "Comment content cannot be null.")
			return
		}
		th.Comments = append(th.Comments, Comment{ID: i + 1, ParentID: c.ParentCommentID, Author: h.who, Content: *c.Content, CommentType: enumString(c.CommentType, commentTypes, "text")})
	}
	p.threads = append(p.threads, th)
	writeJSON(h.w, http.StatusOK, h.s.threadJSON(h.repo, p, th))
}

func (h *handler) thread(p *pullState, id int) *Thread {
	for _, th := range p.threads {
		if th.ID == id {
			return th
		}
	}
	writeError(h.w, http.StatusNotFound, "CommentThreadNotFoundException", "TF401181: The requested pull request comment thread was not found.")
	return nil
}

func (h *handler) updateThread(number, id int) {
	p := h.pull(number)
	if p == nil {
		return
	}
	th := h.thread(p, id)
	if th == nil {
		return
	}
	var in struct {
		Status any `json:"status"`
	}
	if !h.decode(&in) {
		return
	}
	if in.Status != nil {
		th.Status = enumString(in.Status, threadStatuses, th.Status)
	}
	writeJSON(h.w, http.StatusOK, h.s.threadJSON(h.repo, p, th))
}

func (h *handler) createComment(number, threadID int) {
	p := h.pull(number)
	if p == nil {
		return
	}
	th := h.thread(p, threadID)
	if th == nil {
		return
	}
	var in commentIn
	if !h.decode(&in) {
		return
	}
	if in.Content == nil {
		writeError(h.w, http.StatusBadRequest, "InvalidArgumentValueException", "Comment content cannot be null.")
		return
	}
	if in.ParentCommentID != 0 && commentIndex(th, in.ParentCommentID) < 0 {
		writeError(h.w, http.StatusBadRequest, "InvalidArgumentValueException", "TF401182: The parent comment was not found in this thread.")
		return
	}
	c := Comment{ID: len(th.Comments) + 1, ParentID: in.ParentCommentID, Author: h.who, Content: *in.Content, CommentType: enumString(in.CommentType, commentTypes, "text")}
	th.Comments = append(th.Comments, c)
	writeJSON(h.w, http.StatusOK, h.s.commentJSON(h.repo, p, th, c))
}

func commentIndex(th *Thread, id int) int {
	for i, c := range th.Comments {
		if c.ID == id && !c.Deleted {
			return i
		}
	}
	return -1
}

func (h *handler) updateComment(number, threadID, id int) {
	p := h.pull(number)
	if p == nil {
		return
	}
	th := h.thread(p, threadID)
	if th == nil {
		return
	}
	i := commentIndex(th, id)
	if i < 0 {
		writeError(h.w, http.StatusNotFound, "CommentNotFoundException", "TF401183: The requested pull request comment was not found.")
		return
	}
	// Only a comment's author may edit it.
	if !strings.EqualFold(th.Comments[i].Author, h.who) {
		writeError(h.w, http.StatusForbidden, "UnauthorizedAccessException", "TF401027: You need the Git 'Contribute to pull requests' permission to perform this action.")
		return
	}
	var in commentIn
	if !h.decode(&in) {
		return
	}
	if in.Content != nil {
		th.Comments[i].Content = *in.Content
	}
	writeJSON(h.w, http.StatusOK, h.s.commentJSON(h.repo, p, th, th.Comments[i]))
}

// createStatus posts a pull request status (number > 0) or a commit
// status (sha).
func (h *handler) createStatus(number int, sha string) {
	var p *pullState
	if number > 0 {
		if p = h.pull(number); p == nil {
			return
		}
	}
	var in struct {
		State       any    `json:"state"`
		Description string `json:"description"`
		TargetURL   string `json:"targetUrl"`
		IterationID int    `json:"iterationId"`
		Context     *struct {
			Genre string `json:"genre"`
			Name  string `json:"name"`
		} `json:"context"`
	}
	if !h.decode(&in) {
		return
	}
	if in.Context == nil || in.Context.Name == "" {
		writeError(h.w, http.StatusBadRequest, "InvalidArgumentValueException", "The status context name cannot be null or empty.")
		return
	}
	state := enumString(in.State, statusStates, "")
	if state == "" {
		writeError(h.w, http.StatusBadRequest, "InvalidArgumentValueException", "The status state is not valid.")
		return
	}
	if p != nil && in.IterationID != 0 && (in.IterationID < 1 || in.IterationID > len(p.Iterations)) {
		writeError(h.w, http.StatusBadRequest, "InvalidArgumentValueException", "TF401178: The requested pull request iteration was not found.")
		return
	}
	st := Status{ID: h.s.nextID, State: state, Genre: in.Context.Genre, Name: in.Context.Name, Description: in.Description, TargetURL: in.TargetURL, Author: h.who}
	h.s.nextID++
	out := map[string]any{
		"id": st.ID, "state": st.State, "description": st.Description, "context": map[string]any{"genre": st.Genre, "name": st.Name},
		"creationDate": jsonTime(time.Now()), "updatedDate": jsonTime(time.Now()), "createdBy": h.s.identityJSON(h.who),
	}
	if st.TargetURL != "" {
		out["targetUrl"] = st.TargetURL
	}
	if p != nil {
		st.IterationID = in.IterationID
		if st.IterationID != 0 {
			out["iterationId"] = st.IterationID
		}
		p.statuses = append(p.statuses, st)
	} else {
		h.repo.statuses[sha] = append(h.repo.statuses[sha], st)
	}
	writeJSON(h.w, http.StatusOK, out)
}

// pollCompletion advances a queued completion by one GET of the pull
// request: after CompletionPolls of them it ends, completed or failed.
func (h *handler) pollCompletion(p *pullState) {
	if p.queued.IsZero() {
		return
	}
	if p.CompletionPolls--; p.CompletionPolls > 0 {
		return
	}
	p.queued = time.Time{}
	if p.MergeFailure != "" {
		p.MergeStatus, p.ClosedBy, p.MergeStrategy, p.DeleteSourceBranch = "failure", "", "", false
		return
	}
	p.Status, p.MergeStatus, p.closed = "completed", "succeeded", time.Now()
}

// updatePull handles PATCH on a pull request: completing it (status
// completed, with the source commit the caller saw and completion
// options), abandoning it, or retitling it.
func (h *handler) updatePull(number int) {
	p := h.pull(number)
	if p == nil {
		return
	}
	var in struct {
		Status                any    `json:"status"`
		Title                 string `json:"title"`
		LastMergeSourceCommit *struct {
			CommitID string `json:"commitId"`
		} `json:"lastMergeSourceCommit"`
		CompletionOptions *struct {
			MergeStrategy      any  `json:"mergeStrategy"`
			DeleteSourceBranch bool `json:"deleteSourceBranch"`
			SquashMerge        bool `json:"squashMerge"`
		} `json:"completionOptions"`
	}
	if !h.decode(&in) {
		return
	}
	if in.Title != "" {
		p.Title = in.Title
	}
	switch enumString(in.Status, pullStatuses, "") {
	case "":
	case "abandoned":
		p.Status, p.closed, p.ClosedBy = "abandoned", time.Now(), h.who
	case "completed":
		if p.Status != "active" {
			writeError(h.w, http.StatusConflict, "InvalidPullRequestException", "TF401171: The pull request cannot be completed because it is not active.")
			return
		}
		if in.LastMergeSourceCommit == nil || !strings.EqualFold(in.LastMergeSourceCommit.CommitID, p.HeadSHA) {
			writeError(h.w, http.StatusConflict, "GitPullRequestStaleException", "TF401192: The source branch of the pull request has been updated; the pull request cannot be completed with the commit given.")
			return
		}
		if !p.queued.IsZero() {
			break // already queued: the answer is the pull request as it is
		}
		if p.CompletionPolls == 0 && (p.MergeFailure != "" || p.MergeStatus != "succeeded") {
			msg := p.MergeFailure
			if msg == "" {
				msg = "The merge of the pull request has not succeeded: " + p.MergeStatus
			}
			out := h.pullJSON(p)
			out["mergeFailureMessage"] = msg
			out["mergeFailureType"] = "unknown"
			writeJSON(h.w, http.StatusOK, out)
			return
		}
		p.ClosedBy = h.who
		p.MergeStrategy = "noFastForward"
		if in.CompletionOptions != nil {
			p.MergeStrategy = enumString(in.CompletionOptions.MergeStrategy, mergeStrategies, p.MergeStrategy)
			if in.CompletionOptions.MergeStrategy == nil && in.CompletionOptions.SquashMerge {
				p.MergeStrategy = "squash"
			}
			p.DeleteSourceBranch = in.CompletionOptions.DeleteSourceBranch
		}
		if p.CompletionPolls > 0 {
			// Azure queues the merge and completes later: the answer is
			// the pull request, still active.
			p.queued, p.MergeStatus = time.Now(), "queued"
			break
		}
		p.Status, p.closed = "completed", time.Now()
	default:
		writeError(h.w, http.StatusBadRequest, "InvalidArgumentValueException", "The pull request status is not valid.")
		return
	}
	writeJSON(h.w, http.StatusOK, h.pullJSON(p))
}
