package runner

import (
	"cmp"
	"context"
	"fmt"
	"strings"

	"github.com/atollhq/atoll"
	"github.com/atollhq/atoll/command"
)

// notYet answers a command Atoll parses, as Atlantis does, but cannot run
// yet: never silently ignored.
func notYet(p command.Parser, cmd *command.Command) string {
	name := cmd.Name
	if cmd.SubName != "" {
		name += " " + cmd.SubName
	}
	return fmt.Sprintf("**`%s %s` is not supported by Atoll yet.** The command was understood, but nothing was run.",
		cmp.Or(p.ExecutableName, command.DefaultExecutableName), name)
}

// cancelMark is the error of the requests a cancel request canceled; it
// finds them again when the cancel request replies.
func cancelMark(cancelID int64) string {
	return fmt.Sprintf("Canceled by a cancel comment (request %d).", cancelID)
}

// cancel replies to a cancel comment. The queued requests were canceled
// when the comment arrived (Enqueue), and a running plan interrupted; this
// request ran only after that one ended. A running apply is never
// interrupted.
func (r *Runner) cancel(ctx context.Context, w *work) error {
	canceled, err := r.DB.CanceledBy(ctx, w.pull.ID, cancelMark(w.req.ID))
	if err != nil {
		return err
	}
	var queued, interrupted []string
	for _, q := range canceled {
		what := q.Kind
		if q.Comment != "" {
			// A comment is one line (Parse ignores the others) but may
			// hold backticks: a code span needs a longer fence.
			what = codeSpan(q.Comment)
		}
		line := fmt.Sprintf("- %s by %s\n", what, cmp.Or(q.User, "Atoll"))
		if q.StartedAt != nil {
			interrupted = append(interrupted, line)
		} else {
			queued = append(queued, line)
		}
	}
	var b strings.Builder
	if len(interrupted) > 0 {
		fmt.Fprintf(&b, "**Interrupted the running plan** of this pull request (its locks are released, as after a failed plan):\n%s\n",
			strings.Join(interrupted, ""))
	}
	if len(queued) > 0 {
		fmt.Fprintf(&b, "**Canceled %d queued command(s)** of this pull request:\n%s\n", len(queued), strings.Join(queued, ""))
	}
	if b.Len() == 0 {
		b.WriteString("**Cancel**: this pull request had no queued commands and no running plan.\n\n")
	}
	b.WriteString("A running apply is never interrupted: it finishes as usual.")
	return r.reporter().reply(ctx, w, "cancel", b.String())
}

// codeSpan renders one line of text as a Markdown code span that its own
// backticks cannot close.
func codeSpan(s string) string {
	fence := "`"
	for strings.Contains(s, fence) {
		fence += "`"
	}
	return fence + " " + s + " " + fence
}

// version answers "version" as Atlantis does, per project of the pull
// request (those it has planned), selected by -d/-w/-p: the version of the
// binary the project's newest plan asked for (terraform_version,
// terraform_distribution), read from the binary, or why there is none.
func (r *Runner) version(ctx context.Context, w *work, cmd *command.Command) error {
	tf := "unknown"
	if v, err := r.TerraformVersion(ctx); err == nil {
		tf = v.String()
	}
	projects, err := r.DB.PullProjects(ctx, w.pull.ID)
	if err != nil {
		return err
	}
	plans, err := r.DB.Jobs(ctx, atoll.JobFilter{Repo: w.repo.FullName(), Pull: w.pull.Number, Kind: atoll.JobPlan})
	if err != nil {
		return err
	}
	newest := map[int64]*atoll.Job{} // by project: Jobs lists newest first
	for _, j := range plans {
		if _, ok := newest[j.ProjectID]; !ok {
			newest[j.ProjectID] = j
		}
	}
	var b strings.Builder
	fmt.Fprintf(&b, "Atoll %s\n\n", r.Version)
	n := 0
	for _, p := range projects {
		if !selects(cmd, &atoll.Job{Dir: p.Dir, Workspace: p.Workspace, Project: p.Name}) {
			continue
		}
		n++
		fmt.Fprintf(&b, "Version for dir: `%s` workspace: `%s`%s: %s\n", p.Dir, p.Workspace, projectName(p.Name), r.projectVersion(ctx, newest[p.ID], tf))
	}
	if n == 0 {
		fmt.Fprintf(&b, "Terraform: `%s`\n\nNo project of this pull request%s has been planned yet: this is the version a project without terraform_version runs.", tf, selectionText(cmd))
	}
	return r.reporter().reply(ctx, w, "version", strings.TrimRight(b.String(), "\n"))
}

// projectVersion names the binary a project's plan job selects.
func (r *Runner) projectVersion(ctx context.Context, plan *atoll.Job, fallback string) string {
	if plan == nil || (plan.Spec.TerraformVersion == "" && plan.Spec.TerraformDistribution == "") {
		return "Terraform `" + fallback + "`"
	}
	name := "Terraform"
	if r.distribution(plan) == "opentofu" {
		name = "OpenTofu"
	}
	bin, err := r.SelectTerraform(ctx, plan.Spec.TerraformDistribution, plan.Spec.TerraformVersion)
	if err != nil {
		return fmt.Sprintf("%s %s asked, but %s", name, codeSpan(plan.Spec.TerraformVersion), atoll.ErrorMessage(err))
	}
	if bin.Version == nil {
		return name + " `" + fallback + "`"
	}
	return name + " `" + bin.Version.String() + "`"
}

func projectName(name string) string {
	if name == "" {
		return ""
	}
	return " project: `" + name + "`"
}
