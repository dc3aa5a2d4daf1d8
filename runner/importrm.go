package runner

import (
	"context"
	"fmt"
	"strings"

	"github.com/atollhq/atoll"
	"github.com/atollhq/atoll/command"
)

// importRm runs an "import ADDRESS ID" or "state rm ADDRESS..." comment as
// Atlantis does: one job per project the comment targets (with -d/-p/-w) or,
// without them, per modified project; an import runs in one project only.
// The jobs take their projects' locks as a plan does, and a success discards
// the project's unapplied plan, which was made against the old state.
func (r *Runner) importRm(ctx context.Context, w *work, cmd *command.Command) error {
	kind := atoll.JobImport
	if cmd.Name == command.State {
		kind = atoll.JobStateRm
	}
	if w.pull.State != atoll.PullOpen {
		return r.reporter().reply(ctx, w, "error", fmt.Sprintf("This pull request is %s: Atoll does not run %s on closed pull requests.", w.pull.State, commandText(kind)))
	}
	jobs, err := r.DB.RequestJobs(ctx, w.req.ID)
	if err != nil {
		return err
	}
	if len(jobs) == 0 {
		// They change the state as an apply does: a freeze stops them.
		if f, err := r.DB.Freeze(ctx); err != nil {
			return err
		} else if refused := f.Refusal(); refused != nil {
			return r.reporter().reply(ctx, w, kind, fmt.Sprintf("**%s refused**: %s changes the state, as an apply does. %s", title(kind), commandText(kind), atoll.ErrorMessage(refused)))
		}
		if jobs, err = r.resolvePlan(ctx, w, cmd, false); err != nil {
			return r.fail(ctx, w, kind, err)
		}
	}
	if len(jobs) == 0 {
		return r.reporter().reply(ctx, w, kind, fmt.Sprintf("Ran %s for 0 projects: no modified Terraform projects were found in this pull request. Name the project with `-d` or `-p`.", title(kind)))
	}
	return r.report(ctx, w, kind, jobs[0].HeadSHA, r.runLocked(ctx, w, jobs, r.runImportRm))
}

// resolvedKind is the kind of the jobs a plan, import or state rm comment
// resolves to. Import refuses more than one project, as Atlantis does: an
// address is of one configuration.
func resolvedKind(cmd *command.Command, projects int) (string, error) {
	switch cmd.Name {
	case command.Import:
		if projects > 1 {
			return "", atoll.Errorf(atoll.EINVALID, "import runs in one project only, and this command selects %d: name one with `-d`, `-w` or `-p`.", projects)
		}
		return atoll.JobImport, nil
	case command.State:
		return atoll.JobStateRm, nil
	}
	return atoll.JobPlan, nil
}

func commandText(kind string) string {
	if kind == atoll.JobStateRm {
		return "state rm"
	}
	return kind
}

// runImportRm runs one import or state rm job whose lock its request holds.
// import_requirements are checked first (Atlantis checks them for import
// only); refused, the job gives back a lock taken for it.
func (r *Runner) runImportRm(ctx context.Context, w *work, j *atoll.Job, sink *logSink, res *atoll.ProjectResult) error {
	if j.Kind == atoll.JobImport && len(j.Spec.ImportRequirements) > 0 {
		d, err := r.refresh(ctx, w)
		if err != nil {
			return err
		}
		if err := r.checkRequirements(ctx, w, d, j, "import"); err != nil {
			if j.Spec.LockTaken {
				r.releaseRefused(w, j, sink)
			}
			return err
		}
	}
	if err := r.useTerraform(ctx, w, j, sink); err != nil {
		return err
	}
	out, err := r.executorFor(j).Run(ctx, r.execSpec(w, j), r.events(w, j, sink, nil))
	res.Output = out.Output
	if err != nil {
		return err
	}
	if err := sink.Flush(); err != nil {
		return err
	}
	event := func(n int) atoll.Event {
		detail := fmt.Sprintf("%s: %s", projectLabel(j.Dir, j.Workspace, j.Project), strings.Join(j.Spec.Args, " "))
		if n > 0 {
			detail += fmt.Sprintf("; %d unapplied plan(s) discarded", n)
		}
		return atoll.Event{Actor: j.User, Action: "state." + strings.TrimPrefix(j.Kind, "state_"), Repo: j.Repo, Pull: j.Pull,
			Detail: detail, Source: w.req.Source}
	}
	return r.commit("finish "+j.Kind, func(ctx context.Context) error {
		n, err := r.DB.FinishStateJob(ctx, j, event)
		res.PlanDiscarded = n > 0
		return err
	})
}

// releaseRefused gives back the lock taken for an import its requirements
// refused: it ran nothing to hold the lock for.
func (r *Runner) releaseRefused(w *work, j *atoll.Job, sink *logSink) {
	err := r.commit("release lock of refused "+j.Kind, func(ctx context.Context) error {
		_, err := r.DB.ReleaseLocksWhere(ctx, atoll.LockSelector{PullID: j.PullID, ProjectID: j.ProjectID}, j.User, w.req.Source, "lock.release", commandText(j.Kind)+" refused")
		return err
	})
	if err != nil {
		w.log.Error("release lock of refused "+j.Kind, "job", j.ID, "err", err)
		return
	}
	sink.Write(atoll.StreamAtoll, "The "+commandText(j.Kind)+" was refused: the project's lock was released.")
}
