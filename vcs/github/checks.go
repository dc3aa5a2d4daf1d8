package github

import (
	"context"
	"strings"
	"sync"
	"time"

	"github.com/atollhq/atoll"
	"github.com/atollhq/atoll/vcs"
	"github.com/google/go-github/v88/github"
)

// Check runs (Config.Checks) replace commit statuses one for one: each
// status context ("atlantis/plan: dir/default", the aggregate
// "atlantis/plan") is a check run of that name on the head commit, so
// required checks work as with statuses. A run goes in_progress then
// completed; its updates PATCH the same run. A run already completed that
// is set pending again (a new plan of the same commit) is a new run of the
// same name, which GitHub shows in its place.

const (
	// maxCheckTitle keeps the output title to a line; maxCheckSummary is
	// GitHub's limit on the output summary (65535 characters).
	maxCheckTitle   = 255
	maxCheckSummary = 65535
	// maxRemembered bounds the remembered run ids; past it they are
	// forgotten and found again on GitHub when needed.
	maxRemembered = 4096
)

// checkRuns remembers the check run of each repository, commit and name,
// so that updates patch the run they belong to.
type checkRuns struct {
	mu   sync.Mutex
	runs map[string]*checkRun
}

type checkRun struct {
	mu        sync.Mutex // one update of a run at a time, in order
	id        int64      // 0: not known yet
	completed bool
}

func (c *checkRuns) get(key string) *checkRun {
	c.mu.Lock()
	defer c.mu.Unlock()
	if c.runs == nil || len(c.runs) >= maxRemembered {
		c.runs = map[string]*checkRun{}
	}
	r := c.runs[key]
	if r == nil {
		r = &checkRun{}
		c.runs[key] = r
	}
	return r
}

// checkState maps a commit status state to a check run's status and
// conclusion. An error (an interrupted job) is a failure: "neutral" would
// pass a required check.
func checkState(state string) (status, conclusion string) {
	switch state {
	case vcs.StatusPending:
		return "in_progress", ""
	case vcs.StatusSuccess:
		return "completed", "success"
	}
	return "completed", "failure"
}

// setCheckRun creates or updates the check run st.Context on sha.
func (p *Provider) setCheckRun(ctx context.Context, repo atoll.Repo, sha string, st vcs.Status) error {
	gh, err := p.client(ctx, repo.Owner, repo.Name)
	if err != nil {
		return err
	}
	status, conclusion := checkState(st.State)
	run := p.checks.get(strings.ToLower(repo.FullName()) + "@" + sha + "\x00" + st.Context)
	run.mu.Lock()
	defer run.mu.Unlock()
	if run.id == 0 {
		// Not known in this process (a restart): the run may exist.
		if err := p.findCheckRun(ctx, gh, repo, sha, st.Context, run); err != nil {
			return err
		}
	}
	summary := st.Details
	if summary == "" {
		summary = st.Description
	}
	output := &github.CheckRunOutput{
		Title:   github.Ptr(truncate(st.Description, maxCheckTitle)),
		Summary: github.Ptr(truncate(summary, maxCheckSummary)),
	}
	var detailsURL, concl *string
	var completedAt *github.Timestamp
	if st.TargetURL != "" {
		detailsURL = github.Ptr(st.TargetURL)
	}
	if conclusion != "" {
		concl = github.Ptr(conclusion)
		completedAt = &github.Timestamp{Time: time.Now()}
	}
	if run.id != 0 && !(run.completed && conclusion == "") {
		_, _, err := gh.Checks.UpdateCheckRun(ctx, repo.Owner, repo.Name, run.id, github.UpdateCheckRunOptions{
			Name: st.Context, DetailsURL: detailsURL, Status: github.Ptr(status), Conclusion: concl,
			CompletedAt: completedAt, Output: output,
		})
		if err != nil {
			return apiError(err, "update check run %q on %s@%s", st.Context, repo.FullName(), sha)
		}
	} else {
		cr, _, err := gh.Checks.CreateCheckRun(ctx, repo.Owner, repo.Name, github.CreateCheckRunOptions{
			Name: st.Context, HeadSHA: sha, DetailsURL: detailsURL, Status: github.Ptr(status), Conclusion: concl,
			StartedAt: &github.Timestamp{Time: time.Now()}, CompletedAt: completedAt, Output: output,
		})
		if err != nil {
			return apiError(err, "create check run %q on %s@%s", st.Context, repo.FullName(), sha)
		}
		run.id = cr.GetID()
	}
	run.completed = conclusion != ""
	return nil
}

// findCheckRun looks up this App's latest check run named name on sha.
func (p *Provider) findCheckRun(ctx context.Context, gh *github.Client, repo atoll.Repo, sha, name string, run *checkRun) error {
	res, _, err := gh.Checks.ListCheckRunsForRef(ctx, repo.Owner, repo.Name, sha, &github.ListCheckRunsOptions{
		CheckName: github.Ptr(name), Filter: github.Ptr("latest"), AppID: github.Ptr(p.cfg.AppID),
		ListOptions: github.ListOptions{PerPage: 100},
	})
	if err != nil {
		return apiError(err, "find check run %q on %s@%s", name, repo.FullName(), sha)
	}
	for _, cr := range res.CheckRuns {
		if cr.GetName() != name || cr.GetHeadSHA() != sha || cr.GetApp().GetID() != p.cfg.AppID || cr.GetID() < run.id {
			continue
		}
		run.id, run.completed = cr.GetID(), cr.GetStatus() == "completed"
	}
	return nil
}
