package runner

import (
	"context"
	"fmt"
	"strings"

	"github.com/atollhq/atoll"
	"github.com/atollhq/atoll/vcs"
)

// checkRequirements checks the job's apply_requirements, plan_requirements
// or import_requirements (by command) against the pull request as the VCS
// reports it now.
func (r *Runner) checkRequirements(ctx context.Context, w *work, d *vcs.PullDetails, j *atoll.Job, command string) error {
	reqs := j.Spec.ApplyRequirements
	if command == "plan" {
		reqs = j.Spec.PlanRequirements
	} else if command == "import" {
		reqs = j.Spec.ImportRequirements
	}
	var unmet []string
	for _, req := range reqs {
		switch req {
		case "approved":
			if !d.Approved {
				unmet = append(unmet, "the pull request must be approved by someone other than its author")
			}
		case "mergeable":
			if !d.Mergeable {
				unmet = append(unmet, "the pull request must be mergeable")
			}
		case "undiverged":
			files, err := r.divergedFiles(ctx, w, j, command)
			if err != nil {
				w.log.Warn("undiverged check failed", "job", j.ID, "err", err)
				unmet = append(unmet, "the branch must not have diverged from "+d.BaseRef+", and checking that failed: "+atoll.ErrorMessage(err))
			} else if len(files) > 0 && command != "apply" {
				unmet = append(unmet, fmt.Sprintf("%s has commits changing this project that the branch does not have (%s): merge %s into the branch",
					d.BaseRef, divergedText(files), d.BaseRef))
			} else if len(files) > 0 {
				unmet = append(unmet, fmt.Sprintf("%s has changed this project since it was planned (%s): run `%s plan` again to plan on top of it, or merge %s into the branch",
					d.BaseRef, divergedText(files), r.Parser.ExecutableName, d.BaseRef))
			}
		}
	}
	if len(unmet) == 0 {
		return nil
	}
	return atoll.Errorf(atoll.EFORBIDDEN, "Cannot %s: %s.", command, strings.Join(unmet, "; "))
}
