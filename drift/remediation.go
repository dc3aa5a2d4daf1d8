package drift

import (
	"encoding/json"
	"net/http"
	"time"
)

// The statuses of a remediation run and of its projects. RunPending exists
// for compatibility only: a run is stored as running before it starts.
const (
	RunPending = "pending"
	RunRunning = "running"
	RunSuccess = "success"
	RunFailed  = "failed"
	RunPartial = "partial"
)

// ApplySucceeded is the drift summary a project has after a successful
// remediation apply, both in its result and in the refreshed record.
const ApplySucceeded = "Apply completed successfully"

// ProjectRemediation is one project's part of a remediation run.
// DriftBefore is the cached drift that motivated it (only when that record
// had drift); DriftAfter is what the run's own plan or apply left.
type ProjectRemediation struct {
	ProjectName string   `json:"project_name"`
	Directory   string   `json:"directory"`
	Workspace   string   `json:"workspace"`
	Status      string   `json:"status"`
	PlanOutput  string   `json:"plan_output,omitempty"`
	ApplyOutput string   `json:"apply_output,omitempty"`
	Error       string   `json:"error,omitempty"`
	DriftBefore *Details `json:"drift_before,omitempty"`
	DriftAfter  *Details `json:"drift_after,omitempty"`
}

// RemediationSummary counts a run's projects by outcome.
type RemediationSummary struct {
	TotalProjects int `json:"total_projects"`
	SuccessCount  int `json:"success_count"`
	FailureCount  int `json:"failure_count"`
}

// RemediationResult is a remediation run, as POST /api/drift/remediate
// answers it and the history routes return it. CompletedAt stays nil, and
// out of the JSON, while the run is going.
type RemediationResult struct {
	ID          string               `json:"id"`
	Repository  string               `json:"repository"`
	Ref         string               `json:"ref"`
	Action      string               `json:"action"`
	Status      string               `json:"status"`
	StartedAt   time.Time            `json:"started_at"`
	CompletedAt *time.Time           `json:"completed_at,omitempty"`
	Projects    []ProjectRemediation `json:"projects"`
	Summary     RemediationSummary   `json:"summary"`
	Error       string               `json:"error,omitempty"`
}

// MarshalJSON writes "projects" as [] rather than null when empty.
func (r RemediationResult) MarshalJSON() ([]byte, error) {
	type plain RemediationResult
	q := plain(r)
	q.Projects = nonNil(q.Projects)
	return json.Marshal(q)
}

// Complete marks the run finished at now: it counts the projects and sets
// the overall status. A run with a top-level error failed whatever its
// projects say, since it could not pick or run its targets.
func (r *RemediationResult) Complete(now time.Time) {
	r.CompletedAt = &now
	r.Summary = SummarizeRemediation(r.Projects)
	r.Status = OverallStatus(r.Summary)
	if r.Error != "" {
		r.Status = RunFailed
	}
}

// SummarizeRemediation counts projects by their status.
func SummarizeRemediation(projects []ProjectRemediation) RemediationSummary {
	s := RemediationSummary{TotalProjects: len(projects)}
	for _, p := range projects {
		switch p.Status {
		case RunSuccess:
			s.SuccessCount++
		case RunFailed:
			s.FailureCount++
		}
	}
	return s
}

// OverallStatus is a finished run's status from its counts: success when
// nothing failed (including when there was nothing to do), failed when
// nothing succeeded, partial otherwise.
func OverallStatus(s RemediationSummary) string {
	switch {
	case s.FailureCount == 0:
		return RunSuccess
	case s.SuccessCount == 0:
		return RunFailed
	}
	return RunPartial
}

// RemediationStatusCode is the HTTP answer to a finished run: 200 for
// success; 207 for partial (both with the success envelope); 409 CONFLICT
// for a failure with project results, which go in the error's details;
// and 500 for a failure before any project ran, whose error may hold
// details of the checkout and so is not shown. code is empty for the
// success envelope.
func RemediationStatusCode(r RemediationResult) (status int, code string) {
	switch {
	case r.Status == RunFailed && len(r.Projects) == 0:
		return http.StatusInternalServerError, CodeInternal
	case r.Status == RunFailed:
		return http.StatusConflict, CodeConflict
	case r.Status == RunPartial:
		return http.StatusMultiStatus, ""
	}
	return http.StatusOK, ""
}

// RemediationList is the data of GET /api/drift/remediate: the newest
// results first. Count is always len(Results).
type RemediationList struct {
	Repository string              `json:"repository"`
	Count      int                 `json:"count"`
	Results    []RemediationResult `json:"results"`
}

// NewRemediationList builds the history data for the results found.
func NewRemediationList(repository string, results []RemediationResult) RemediationList {
	return RemediationList{Repository: repository, Count: len(results), Results: nonNil(results)}
}

// MarshalJSON writes "results" as [] rather than null when empty.
func (l RemediationList) MarshalJSON() ([]byte, error) {
	type plain RemediationList
	q := plain(l)
	q.Results = nonNil(q.Results)
	return json.Marshal(q)
}
