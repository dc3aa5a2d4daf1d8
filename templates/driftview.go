package templates

import (
	"strings"

	"github.com/atollhq/atoll"
)

// SectionDrift is the drift page's one live section.
const SectionDrift = "drift"

// DriftStates are the drift states in the order the page counts them.
var DriftStates = []string{atoll.DriftDrifted, atoll.DriftFailed, atoll.DriftInSync}

// DriftPage shows every project's drift state at its branch: its last
// check. Repo and State are the page's filters; Projects are those of
// Repo, in every state (Counts counts them per state), and Shown those
// of State among them.
type DriftPage struct {
	Meta     Meta
	Repo     string
	State    string
	Projects []*atoll.DriftProject
	// CanCheck: the server runs drift checks and the user may ask for one
	// (an operator): each repository's branch and project has its "Check
	// now" button.
	CanCheck bool
	// History is the checks of one project at one branch (?project= and
	// ?branch=), shown above the table; nil when none was asked for.
	History *DriftHistory
	// Approved are the pending reconcile plans (DriftProject's
	// PendingPlanID) whose newest decision approves them: their rows get
	// an "Apply" button (operators).
	Approved map[int64]bool
}

// DriftHistory is a project's last checks at a branch, newest first.
// Name is the project's name (or dir), "project <id>" when the page does
// not know it.
type DriftHistory struct {
	ProjectID int64
	Name      string
	Branch    string
	Checks    []*atoll.DriftCheckRecord
}

// DriftHistoryPath is the drift page of repo with project projectID's
// history at branch.
func DriftHistoryPath(repo string, projectID int64, branch string) string {
	return paths.DriftHistory(repo, projectID, branch)
}

// DriftCheckPath, DriftReconcilePath and DriftApplyPath are where the
// drift page's buttons post.
func DriftCheckPath() string     { return paths.DriftCheck() }
func DriftReconcilePath() string { return paths.DriftReconcile() }
func DriftApplyPath() string     { return paths.DriftApply() }

// driftCheckSummary is a past check's counts as a plan summary.
func driftCheckSummary(c *atoll.DriftCheckRecord) *atoll.Summary {
	return &atoll.Summary{Add: c.Add, Change: c.Change, Destroy: c.Destroy}
}

// DriftCount is how many projects are in a drift state.
type DriftCount struct {
	State string
	Count int
}

// Counts are the projects per drift state, every state listed.
func (d DriftPage) Counts() []DriftCount {
	n := map[string]int{}
	for _, p := range d.Projects {
		n[p.State]++
	}
	out := make([]DriftCount, 0, len(DriftStates))
	for _, s := range DriftStates {
		out = append(out, DriftCount{s, n[s]})
	}
	return out
}

// DriftGroup is one repository's branch and its projects shown.
type DriftGroup struct {
	Repo, Branch string
	Projects     []*atoll.DriftProject
}

// Groups are the projects in State (all without it), by repository and
// branch, in the store's order.
func (d DriftPage) Groups() []DriftGroup {
	var out []DriftGroup
	for _, p := range d.Projects {
		if d.State != "" && p.State != d.State {
			continue
		}
		if n := len(out); n == 0 || out[n-1].Repo != p.Repo || out[n-1].Branch != p.Branch {
			out = append(out, DriftGroup{Repo: p.Repo, Branch: p.Branch})
		}
		out[len(out)-1].Projects = append(out[len(out)-1].Projects, p)
	}
	return out
}

// DriftStateLabel is how the page names a drift state.
func DriftStateLabel(state string) string {
	switch state {
	case atoll.DriftInSync:
		return "in sync"
	case atoll.DriftDrifted:
		return "drifted"
	case atoll.DriftFailed:
		return "check failed"
	}
	return state
}

// driftBadge is the badge class of a drift state (the job states'
// colours).
func driftBadge(state string) string {
	switch state {
	case atoll.DriftInSync:
		return "badge badge-succeeded"
	case atoll.DriftDrifted:
		return "badge badge-drifted"
	}
	return "badge badge-failed"
}

// DriftPath is the drift page with filters repo and state.
func DriftPath(repo, state string) string { return paths.Drift(repo, state) }

// DriftProjectName names a project: its name, else its dir, with its
// workspace unless default.
func DriftProjectName(p *atoll.DriftProject) string {
	s := p.Project
	if s == "" {
		s = p.Dir
	}
	if p.Workspace != "" && p.Workspace != "default" {
		s += " (" + p.Workspace + ")"
	}
	return s
}

// driftCheckTarget is what "Check now" names a project by: its name, else
// its dir.
func driftCheckTarget(p *atoll.DriftProject) string {
	if p.Project != "" {
		return p.Project
	}
	return p.Dir
}

// driftSummary is a project's counts as a plan summary.
func driftSummary(p *atoll.DriftProject) *atoll.Summary {
	return &atoll.Summary{Add: p.Add, Change: p.Change, Destroy: p.Destroy, Import: p.Import}
}

// driftSectionPath is where the drift page's live section is re-read,
// with the page's filters.
func driftSectionPath(d DriftPage) string {
	p := DriftPath(d.Repo, d.State)
	if d.History != nil {
		p = DriftHistoryPath(d.Repo, d.History.ProjectID, d.History.Branch)
		if d.State != "" {
			p += "&state=" + d.State
		}
	}
	if !strings.Contains(p, "?") {
		return p + "?section=" + SectionDrift
	}
	return p + "&section=" + SectionDrift
}

// driftBack is where the drift page's forms come back to: the page as
// shown (its filters and history).
func driftBack(d DriftPage) string {
	if d.History != nil {
		p := DriftHistoryPath(d.Repo, d.History.ProjectID, d.History.Branch)
		if d.State != "" {
			p += "&state=" + d.State
		}
		return p
	}
	return DriftPath(d.Repo, d.State)
}
