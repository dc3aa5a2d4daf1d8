package runner

import (
	"context"
	"strconv"
	"time"

	"github.com/atollhq/atoll"
	"github.com/atollhq/atoll/metrics"
)

// recordJob counts a finished job in Atlantis's project metrics.
func (r *Runner) recordJob(j *atoll.Job, state string, err error, d time.Duration) {
	if r.Metrics == nil {
		return
	}
	p := metrics.Project{BaseRepo: j.Repo, PullNumber: strconv.Itoa(j.Pull), Project: j.Project, ProjectPath: j.Dir,
		Workspace: j.Workspace, TerraformDistribution: j.Spec.TerraformDistribution, TerraformVersion: j.Spec.TerraformVersion}
	r.Metrics.ProjectRun(j.Kind, p, jobOutcome(state, err), d)
}

// jobOutcome maps a job's end to Atlantis's: a refusal (lock held,
// requirement unmet, plan stale or made for another commit) is a failure,
// as Atlantis's failure results; anything else that did not succeed is an
// error.
func jobOutcome(state string, err error) string {
	switch {
	case state == atoll.JobSucceeded:
		return metrics.Success
	case state == atoll.JobFailed && err != nil && (atoll.ErrorCode(err) == atoll.EFORBIDDEN || atoll.ErrorCode(err) == atoll.ECONFLICT):
		return metrics.Failure
	}
	return metrics.Error
}

// recordRequest counts a finished request in Atlantis's command metrics:
// cmd_autoplan, cmd_comment_<command> and pullclosed_cleanup. It is an
// error when the request failed or any of its jobs did not succeed.
func (r *Runner) recordRequest(ctx context.Context, req *atoll.Request, err error, d time.Duration) {
	if r.Metrics == nil {
		return
	}
	var scope string
	switch req.Kind {
	case atoll.RequestAutoplan:
		scope = "cmd_autoplan"
	case atoll.RequestClose:
		scope = "pullclosed_cleanup"
	case atoll.RequestComment:
		cmd, perr := r.Parser.Parse(req.Comment)
		switch {
		case perr != nil || cmd == nil:
			scope = "cmd_comment"
		case cmd.Name == "state":
			scope = "cmd_comment_state_rm" // Atlantis's command is "state rm"
		default:
			scope = "cmd_comment_" + cmd.Name
		}
	default:
		return
	}
	outcome := metrics.Success
	if err != nil {
		outcome = metrics.Error
	} else if jobs, jerr := r.DB.RequestJobs(ctx, req.ID); jerr != nil {
		r.Logger.Warn("metrics: request jobs", "request", req.ID, "err", jerr)
	} else {
		for _, j := range jobs {
			if j.State != atoll.JobSucceeded {
				outcome = metrics.Error
				break
			}
		}
	}
	r.Metrics.Command(scope, outcome, d)
}
