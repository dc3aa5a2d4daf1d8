package drift

import (
	"encoding/json"
	"fmt"
)

// WebhookPayload is the body of an HTTP drift webhook, sent after each
// detection without project errors, drift or not, as a heartbeat.
type WebhookPayload struct {
	Repository        string           `json:"repository"`
	Ref               string           `json:"ref"`
	DetectionID       string           `json:"detection_id"`
	ProjectsWithDrift int              `json:"projects_with_drift"`
	TotalProjects     int              `json:"total_projects"`
	Projects          []WebhookProject `json:"projects"`
}

// WebhookProject is one project in a webhook. Unlike the API, it calls
// the directory "path" and flattens the counts; its summary is always
// present, empty when the plan had none.
type WebhookProject struct {
	ProjectName string `json:"project_name"`
	Path        string `json:"path"`
	Workspace   string `json:"workspace"`
	HasDrift    bool   `json:"has_drift"`
	ToAdd       int    `json:"to_add"`
	ToChange    int    `json:"to_change"`
	ToDestroy   int    `json:"to_destroy"`
	ToImport    int    `json:"to_import"`
	ToForget    int    `json:"to_forget"`
	Summary     string `json:"summary"`
	Error       string `json:"error,omitempty"`
}

// NewWebhookPayload builds the webhook for a detection. Its ref is the
// first project's (normalized) ref, or the normalized request ref when
// the detection found no projects.
func NewWebhookPayload(repository, requestRef, detectionID string, projects []ProjectDrift) WebhookPayload {
	p := WebhookPayload{
		Repository:    repository,
		Ref:           NormalizeRef(requestRef),
		DetectionID:   detectionID,
		TotalProjects: len(projects),
		Projects:      make([]WebhookProject, 0, len(projects)),
	}
	if len(projects) > 0 {
		p.Ref = projects[0].Ref
	}
	for _, pd := range projects {
		if pd.HasDrift {
			p.ProjectsWithDrift++
		}
		p.Projects = append(p.Projects, webhookProject(pd))
	}
	return p
}

func webhookProject(pd ProjectDrift) WebhookProject {
	w := WebhookProject{
		ProjectName: pd.ProjectName,
		Path:        pd.Directory,
		Workspace:   pd.Workspace,
		HasDrift:    pd.HasDrift,
		Error:       pd.Error,
	}
	if d := pd.Drift; d != nil {
		w.ToAdd, w.ToChange, w.ToDestroy, w.ToImport, w.ToForget = d.ToAdd, d.ToChange, d.ToDestroy, d.ToImport, d.ToForget
		w.Summary = d.Summary
	}
	return w
}

// MarshalJSON writes "projects" as [] rather than null when empty.
func (p WebhookPayload) MarshalJSON() ([]byte, error) {
	type plain WebhookPayload
	q := plain(p)
	q.Projects = nonNil(q.Projects)
	return json.Marshal(q)
}

// ShouldSendWebhook reports whether a detection's webhook goes out: only
// when no project failed, so a receiver never mistakes a broken check for
// "no drift".
func ShouldSendWebhook(projects []ProjectDrift) bool {
	return !AnyError(projects)
}

// SlackAttachment is the one attachment of a drift message to Slack, as
// plain data for whichever client posts it.
type SlackAttachment struct {
	Color  string
	Text   string
	Fields []SlackField
}

// SlackField is one short title/value pair of an attachment.
type SlackField struct {
	Title string
	Value string
	Short bool
}

// SlackMessage is the attachment Atlantis posts for a detection: red
// ("danger") when any project drifted, green ("good") otherwise, and four
// short fields in a fixed order.
func SlackMessage(p WebhookPayload) SlackAttachment {
	a := SlackAttachment{Color: "good", Text: "No drift in " + p.Repository}
	if p.ProjectsWithDrift > 0 {
		a.Color, a.Text = "danger", "Drift detected in "+p.Repository
	}
	a.Fields = []SlackField{
		{Title: "Repository", Value: p.Repository, Short: true},
		{Title: "Ref", Value: p.Ref, Short: true},
		{Title: "Projects with drift", Value: fmt.Sprintf("%d / %d", p.ProjectsWithDrift, p.TotalProjects), Short: true},
		{Title: "Detection ID", Value: p.DetectionID, Short: true},
	}
	return a
}
