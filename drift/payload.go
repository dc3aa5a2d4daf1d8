package drift

import (
	"encoding/json"
	"net/http"
	"time"
)

// ProjectDrift is one project's last drift check at one ref: the API's
// DriftProject object, shared by the status and detect responses.
//
// Drift holds the details of the last successful plan whether or not it
// found drift (the webhook reports its summary either way), but the JSON
// carries "drift" only when HasDrift is set, as the API does. Use
// SetDetails to keep the two consistent.
type ProjectDrift struct {
	ProjectName    string    `json:"project_name"`
	Directory      string    `json:"directory"`
	Workspace      string    `json:"workspace"`
	Ref            string    `json:"ref"`
	BaseBranch     string    `json:"base_branch,omitempty"`
	ResolvedCommit string    `json:"resolved_commit,omitempty"`
	DetectionID    string    `json:"detection_id,omitempty"`
	HasDrift       bool      `json:"has_drift"`
	Drift          *Details  `json:"drift,omitempty"`
	PlanOutput     string    `json:"plan_output,omitempty"`
	LastChecked    time.Time `json:"last_checked"`
	Error          string    `json:"error,omitempty"`
}

// SetDetails records the drift a successful plan found.
func (p *ProjectDrift) SetDetails(d Details) {
	p.HasDrift = HasDrift(d)
	p.Drift = &d
}

// MarshalJSON leaves "drift" out of a project without drift.
func (p ProjectDrift) MarshalJSON() ([]byte, error) {
	type plain ProjectDrift
	q := plain(p)
	if !q.HasDrift {
		q.Drift = nil
	}
	return json.Marshal(q)
}

// Summary counts a list of projects. A project with drift and an error
// counts both as drifted and as errored; "without drift" means neither.
type Summary struct {
	TotalProjects        int `json:"total_projects"`
	ProjectsWithDrift    int `json:"projects_with_drift"`
	ProjectsWithoutDrift int `json:"projects_without_drift"`
	ProjectsWithErrors   int `json:"projects_with_errors"`
}

// Summarize counts projects for a status or detect response.
func Summarize(projects []ProjectDrift) Summary {
	s := Summary{TotalProjects: len(projects)}
	for _, p := range projects {
		if p.HasDrift {
			s.ProjectsWithDrift++
		}
		if p.Error != "" {
			s.ProjectsWithErrors++
		}
		if !p.HasDrift && p.Error == "" {
			s.ProjectsWithoutDrift++
		}
	}
	return s
}

// StatusResponse is the data of GET /api/drift/status. Repository echoes
// the query as given; CheckedAt is the newest LastChecked of Projects (the
// zero time when there are none).
type StatusResponse struct {
	Repository string         `json:"repository"`
	Projects   []ProjectDrift `json:"projects"`
	CheckedAt  time.Time      `json:"checked_at"`
	Summary    Summary        `json:"summary"`
}

// NewStatusResponse builds the status data for the stored projects.
func NewStatusResponse(repository string, projects []ProjectDrift) StatusResponse {
	var newest time.Time
	for _, p := range projects {
		if p.LastChecked.After(newest) {
			newest = p.LastChecked
		}
	}
	return StatusResponse{
		Repository: repository,
		Projects:   nonNil(projects),
		CheckedAt:  newest,
		Summary:    Summarize(projects),
	}
}

// MarshalJSON writes "projects" as [] rather than null when empty.
func (r StatusResponse) MarshalJSON() ([]byte, error) {
	type plain StatusResponse
	q := plain(r)
	q.Projects = nonNil(q.Projects)
	return json.Marshal(q)
}

// DetectResponse is the data of POST /api/drift/detect. ID is this run's
// detection id, which every project's DetectionID repeats.
type DetectResponse struct {
	ID         string         `json:"id"`
	Repository string         `json:"repository"`
	Projects   []ProjectDrift `json:"projects"`
	DetectedAt time.Time      `json:"detected_at"`
	Summary    Summary        `json:"summary"`
}

// NewDetectResponse builds the detect data for one run's projects, in the
// order they were planned.
func NewDetectResponse(id, repository string, detectedAt time.Time, projects []ProjectDrift) DetectResponse {
	return DetectResponse{
		ID:         id,
		Repository: repository,
		Projects:   nonNil(projects),
		DetectedAt: detectedAt,
		Summary:    Summarize(projects),
	}
}

// MarshalJSON writes "projects" as [] rather than null when empty.
func (r DetectResponse) MarshalJSON() ([]byte, error) {
	type plain DetectResponse
	q := plain(r)
	q.Projects = nonNil(q.Projects)
	return json.Marshal(q)
}

// AnyError reports whether any project's check failed. Such a detection
// answers 207, sends no webhook and forgets no stale records, since its
// picture of the repository is incomplete.
func AnyError(projects []ProjectDrift) bool {
	for _, p := range projects {
		if p.Error != "" {
			return true
		}
	}
	return false
}

// DetectStatusCode is the HTTP status of a detection's (success) envelope:
// 207 Multi-Status when some project failed, 200 otherwise.
func DetectStatusCode(projects []ProjectDrift) int {
	if AnyError(projects) {
		return http.StatusMultiStatus
	}
	return http.StatusOK
}

// nonNil makes a nil slice empty, so that JSON has [] where clients
// expect an array.
func nonNil[T any](s []T) []T {
	if s == nil {
		return []T{}
	}
	return s
}
