package azuretest

import (
	"net/http"
	"slices"
	"strconv"
	"strings"
	"time"
)

// Policy is a branch policy on a repository's pull requests, as an
// administrator configures it in the branch policies page. The server
// evaluates it on every pull request of the repository and serves the
// evaluations from the Policy Evaluations API
// (PROJECT/_apis/policy/evaluations?artifactId=...), which is where a
// client learns what keeps a pull request from completing: the pull
// request's mergeStatus only says whether git can merge it, and stays
// "succeeded" while policies block it.
type Policy struct {
	// Type names the policy type: "status" (Require a successful status),
	// "build", "minimumReviewers", "comments", "requiredReviewers",
	// "workItems". Only "status" is evaluated by the server; the others
	// have the fixed Evaluation a test gives.
	Type string
	// Optional is the dialog's "Optional" requirement: the policy is not
	// blocking (isBlocking false) and never keeps a pull request from
	// completing. Policies are "Required" (blocking) by default.
	Optional bool
	// Disabled and Deleted are the configuration's isEnabled (negated) and
	// isDeleted.
	Disabled, Deleted bool
	// StatusToCheck is what is typed into a status policy's "Status to
	// check" box. Azure DevOps splits it at its LAST "/": what comes before
	// is the statusGenre setting, what comes after the statusName, so
	// "atoll/atlantis/apply" is genre "atoll/atlantis", name "apply". A
	// posted status satisfies the policy only when its genre and name are
	// exactly those.
	StatusToCheck string
	// OnlyWhenPosted is a status policy's applicability "Apply only when
	// status is posted": with no matching status the policy does not
	// apply (notApplicable) instead of waiting (queued).
	OnlyWhenPosted bool
	// Evaluation is the evaluation status of a policy that is not a status
	// policy: approved, rejected, running, queued (the default),
	// notApplicable or broken.
	Evaluation string
}

// policyTypeIDs are the ids of Azure DevOps's built-in policy types.
var policyTypeIDs = map[string]string{
	"status":            "cbdc66da-9728-4af8-aada-9a5a32e4a226",
	"build":             "0609b952-1397-4640-95ec-e00a01b2c241",
	"minimumReviewers":  "fa4e907d-c16b-4a4c-9dfa-4906e5d171dd",
	"comments":          "c6a1889d-b943-4856-b76f-9e46bb6b0df2",
	"requiredReviewers": "fd2167ab-b0be-447a-8ec8-39368250530e",
	"workItems":         "40e92b44-2fe1-4dd6-b3d8-74a9c21d0c6e",
}

type policyState struct {
	Policy
	id int
}

// AddPolicy configures a branch policy on a repository's pull requests
// and returns its configuration id.
func (s *Server) AddPolicy(org, project, repo string, pol Policy) int {
	s.mu.Lock()
	defer s.mu.Unlock()
	r := s.repo(org, project, repo)
	id := s.nextID
	s.nextID++
	r.policies = append(r.policies, &policyState{Policy: pol, id: id})
	return id
}

// SetPolicyEvaluation changes the evaluation of a policy that is not a
// status policy (a build finishing, a reviewer policy met).
func (s *Server) SetPolicyEvaluation(org, project, repo string, id int, evaluation string) {
	s.mu.Lock()
	defer s.mu.Unlock()
	for _, pol := range s.repo(org, project, repo).policies {
		if pol.id == id {
			pol.Evaluation = evaluation
			return
		}
	}
	s.t.Fatalf("azuretest: no policy %d on %s/%s/%s", id, org, project, repo)
}

// ProjectID is the id (a GUID) of a project of a repository added.
func (s *Server) ProjectID(org, project string) string {
	return fakeUUID("project:" + strings.ToLower(org+"/"+project))
}

// FailPolicyEvaluations makes the Policy Evaluations API answer with the
// HTTP status code (0 to stop), as when the service is unavailable.
func (s *Server) FailPolicyEvaluations(code int) {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.policyFailure = code
}

// SplitStatusToCheck splits a status policy's "Status to check" string
// as Azure DevOps does: at the last "/", into genre and name; a string
// without "/" is a name with an empty genre.
func SplitStatusToCheck(s string) (genre, name string) {
	i := strings.LastIndex(s, "/")
	if i < 0 {
		return "", s
	}
	return s[:i], s[i+1:]
}

// PolicyEvaluation is what the server evaluates policy id to on a pull
// request now, as the Policy Evaluations API reports it.
func (s *Server) PolicyEvaluation(org, project, repo string, number, id int) string {
	s.mu.Lock()
	defer s.mu.Unlock()
	p := s.pull(org, project, repo, number)
	for _, pol := range s.repos[repoKey(org, project, repo)].policies {
		if pol.id == id {
			return pol.evaluate(p)
		}
	}
	s.t.Fatalf("azuretest: no policy %d on %s/%s/%s", id, org, project, repo)
	return ""
}

// evaluate is the policy's evaluation status on p. A status policy looks
// at the latest status posted on the pull request with its genre and name
// (case and all): a status posted for an iteration older than the pull
// request's latest is for code that is no longer there and does not count.
func (pol *policyState) evaluate(p *pullState) string {
	if pol.Type != "status" {
		if pol.Evaluation == "" {
			return "queued"
		}
		return pol.Evaluation
	}
	genre, name := SplitStatusToCheck(pol.StatusToCheck)
	latest := len(p.Iterations)
	for _, st := range slices.Backward(p.statuses) {
		if st.Genre != genre || st.Name != name || (st.IterationID != 0 && st.IterationID != latest) {
			continue
		}
		switch st.State {
		case "succeeded":
			return "approved"
		case "failed", "error":
			return "rejected"
		case "pending":
			return "running"
		case "notApplicable":
			return "notApplicable"
		}
		return "queued"
	}
	if pol.OnlyWhenPosted {
		return "notApplicable"
	}
	return "queued"
}

// codeReviewArtifact is how the Policy Evaluations API names a pull
// request: vstfs:///CodeReview/CodeReviewId/{projectId}/{pullRequestId},
// with the project's id (a GUID), not its name.
const codeReviewArtifact = "vstfs:///CodeReview/CodeReviewId/"

// policyEvaluations answers GET ORG/PROJECT/_apis/policy/evaluations.
// Awkward behaviour modelled: evaluations whose policy does not apply
// (notApplicable) are left out unless includeNotApplicable=true; $top and
// $skip page the list; an artifact id that names no pull request (the
// project's name where its id belongs, or the pull request's own
// vstfs:///Git/PullRequestId artifact) matches no evaluations and is
// answered with an empty list, not an error, so a client that builds it
// wrongly sees a pull request nothing blocks.
func (s *Server) policyEvaluations(w http.ResponseWriter, r *http.Request, org string) {
	if s.policyFailure != 0 {
		writeError(w, s.policyFailure, "VssServiceException", "The policy service failed (azuretest.FailPolicyEvaluations).")
		return
	}
	q := r.URL.Query()
	artifact := q.Get("artifactId")
	if artifact == "" {
		writeError(w, http.StatusBadRequest, "ArgumentNullException", "Value cannot be null.\r\nParameter name: artifactId")
		return
	}
	var list []any
	if rest, ok := cutPrefixFold(artifact, codeReviewArtifact); ok {
		projectID, num, _ := strings.Cut(rest, "/")
		number, err := strconv.Atoi(num)
		for _, rs := range s.repos {
			if err != nil || !strings.EqualFold(rs.org, org) || !strings.EqualFold(rs.projectID, projectID) || rs.pulls[number] == nil {
				continue
			}
			p := rs.pulls[number]
			for _, pol := range rs.policies {
				status := pol.evaluate(p)
				if status == "notApplicable" && !strings.EqualFold(q.Get("includeNotApplicable"), "true") {
					continue
				}
				list = append(list, s.evaluationJSON(rs, p, pol, status))
			}
		}
	}
	writeJSON(w, http.StatusOK, page(list, q.Get("$skip"), q.Get("$top"), 1<<30))
}

func (s *Server) evaluationJSON(r *repoState, p *pullState, pol *policyState, status string) map[string]any {
	settings := map[string]any{"scope": []any{map[string]any{"refName": p.TargetRef, "matchKind": "Exact", "repositoryId": r.id}}}
	if pol.Type == "status" {
		genre, name := SplitStatusToCheck(pol.StatusToCheck)
		settings["statusName"] = name
		if genre != "" {
			settings["statusGenre"] = genre
		}
		settings["invalidateOnSourceUpdate"] = true
		settings["policyApplicability"] = map[bool]any{false: nil, true: 1}[pol.OnlyWhenPosted]
	}
	started := jsonTime(time.Now())
	out := map[string]any{
		"evaluationId": fakeUUID("evaluation:" + r.id + ":" + strconv.Itoa(p.Number) + ":" + strconv.Itoa(pol.id)),
		"artifactId":   codeReviewArtifact + r.projectID + "/" + strconv.Itoa(p.Number),
		"status":       status,
		"startedDate":  started,
		"configuration": map[string]any{
			"id": pol.id, "revision": 1, "isEnabled": !pol.Disabled, "isBlocking": !pol.Optional, "isDeleted": pol.Deleted,
			"type":     map[string]any{"id": policyTypeIDs[pol.Type], "displayName": pol.Type},
			"settings": settings,
			"url":      s.orgURL(r) + "/" + r.projectID + "/_apis/policy/configurations/" + strconv.Itoa(pol.id),
		},
	}
	if status == "approved" || status == "rejected" {
		out["completedDate"] = started
	}
	return out
}
