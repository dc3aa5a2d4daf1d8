// Package markdown renders Atoll's pull request comments. They follow the
// layout of Atlantis's comments so that teams moving over read them as
// before: a header per project, the output in a collapsed diff block, the
// plan summary and the commands to run next.
package markdown

import (
	"fmt"
	"slices"
	"strings"

	"github.com/atollhq/atoll"
	"github.com/atollhq/atoll/terraform"
)

// DefaultMaxCommentLen is GitHub's limit on a comment body.
const DefaultMaxCommentLen = 65536

// ProjectResult is what the renderer renders: the root package's result
// type (the runner's execution returns it without knowing of Markdown).
type ProjectResult = atoll.ProjectResult

// LockHolder is the pull request holding a project's lock.
type LockHolder = atoll.LockHolder

// Renderer renders comments. Zero fields take their defaults.
type Renderer struct {
	Executable    string // the command users comment, default "atlantis"
	MaxCommentLen int    // default DefaultMaxCommentLen
	// DisableFolding shows Terraform's output in plain code blocks rather
	// than collapsed <details> (--disable-markdown-folding).
	DisableFolding bool
	// RawPlanOutput shows plan output as Terraform prints it, change
	// markers indented, as Atlantis does by default; Atoll moves them to
	// the start of the line unless set (--enable-diff-markdown-format=false).
	RawPlanOutput bool
	// HideUnchangedPlans leaves the projects whose plan has no changes out
	// of a plan comment about several projects; the list at its top still
	// names them (--hide-unchanged-plan-comments).
	HideUnchangedPlans bool
	// QuietPolicyChecks leaves out a project's policy section when every
	// set passed (--quiet-policy-checks): only failures are told.
	QuietPolicyChecks bool
}

func (r Renderer) exe() string {
	if r.Executable == "" {
		return "atlantis"
	}
	return r.Executable
}

func (r Renderer) limit() int {
	if r.MaxCommentLen <= 0 {
		return DefaultMaxCommentLen
	}
	return r.MaxCommentLen
}

// Results renders the results of one comment command as one or more
// comments, each carrying marker so they can be found and replaced later.
func (r Renderer) Results(command string, results []ProjectResult, marker string) []string {
	results = slices.Clone(results)
	for i := range results {
		if results[i].Command == "" {
			results[i].Command = command
		}
	}
	var b strings.Builder
	verb := title(command)
	if len(results) == 1 {
		fmt.Fprintf(&b, "Ran %s for %s\n\n", verb, label(results[0]))
		r.project(&b, results[0])
	} else {
		fmt.Fprintf(&b, "Ran %s for %d projects:\n\n", verb, len(results))
		for i, res := range results {
			fmt.Fprintf(&b, "%d. %s\n", i+1, label(res))
		}
		for i, res := range results {
			if r.HideUnchangedPlans && unchangedPlan(res) {
				continue
			}
			fmt.Fprintf(&b, "\n### %d. %s\n\n", i+1, label(res))
			r.project(&b, res)
			b.WriteString("\n---\n")
		}
	}
	if command == atoll.JobPlan && anyPlanned(results) {
		r.planFooter(&b)
	}
	return r.Split(b.String(), marker)
}

func anyPlanned(results []ProjectResult) bool {
	for _, res := range results {
		if res.Error == "" && res.LockedBy == nil {
			return true
		}
	}
	return false
}

// label names a project as Atlantis does: "dir: `x` workspace: `y`".
func label(res ProjectResult) string {
	s := fmt.Sprintf("dir: %s workspace: %s", code(dirOf(res)), code(workspaceOf(res)))
	if res.Project != "" {
		s = fmt.Sprintf("project: %s %s", code(res.Project), s)
	}
	return s
}

func dirOf(res ProjectResult) string {
	if res.Dir == "" {
		return "."
	}
	return res.Dir
}

func workspaceOf(res ProjectResult) string {
	if res.Workspace == "" {
		return atoll.DefaultWorkspace
	}
	return res.Workspace
}

// commandFor is the comment that runs command on just this project. Like
// Atlantis, it names the project when it has a name and otherwise gives the
// dir, adding the workspace only when it is not the default.
func (r Renderer) commandFor(command string, res ProjectResult) string {
	if res.Project != "" {
		return fmt.Sprintf("%s %s -p %s", r.exe(), command, res.Project)
	}
	s := fmt.Sprintf("%s %s -d %s", r.exe(), command, dirOf(res))
	if ws := workspaceOf(res); ws != atoll.DefaultWorkspace {
		s += " -w " + ws
	}
	return s
}

func (r Renderer) project(b *strings.Builder, res ProjectResult) {
	verb := title(res.Command)
	switch {
	case res.LockedBy != nil:
		r.lockFailure(b, res)
	case res.Error != "":
		fmt.Fprintf(b, "**%s Error**\n\n", verb)
		fenced(b, "", res.Error)
		if res.ApprovalURL != "" {
			fmt.Fprintf(b, "\n:point_right: [Review and approve the plan in Atoll](%s)\n", res.ApprovalURL)
		}
		if out := strings.TrimSpace(res.Output); out != "" && !strings.Contains(res.Error, out) {
			b.WriteString("\n")
			r.details(b, "", res.Output)
		}
	case res.Command == atoll.JobImport || res.Command == atoll.JobStateRm:
		r.stateChanged(b, res)
	case res.Command == atoll.JobPlan:
		if strings.TrimSpace(res.Output) != "" {
			out := res.Output
			if !r.RawPlanOutput {
				out = diffSigns(out)
			}
			r.details(b, "diff", out)
			b.WriteString("\n")
		}
		if line := planLine(res); line != "" {
			b.WriteString(line + "\n\n")
		}
		r.policies(b, res)
		fmt.Fprintf(b, "* :arrow_forward: To **apply** this plan, comment: %s\n", code(r.commandFor("apply", res)))
		if res.LockURL != "" {
			fmt.Fprintf(b, "* :put_litter_in_its_place: To **delete** this plan and lock, click [here](%s)\n", res.LockURL)
		}
		fmt.Fprintf(b, "* :repeat: To **plan** this project again, comment: %s\n", code(r.commandFor("plan", res)))
		if res.MergedAgain {
			b.WriteString("\n:twisted_rightwards_arrows: Upstream was modified, a new merge was performed.\n")
		}
	default:
		if strings.TrimSpace(res.Output) != "" {
			r.details(b, "diff", res.Output)
			b.WriteString("\n")
		}
		if line := applyLine(res); line != "" {
			b.WriteString(line + "\n")
		}
	}
	if res.ApprovedBy != "" && res.Command == atoll.JobApply {
		fmt.Fprintf(b, "\nApproved by %s\n", inline(res.ApprovedBy))
	}
	if res.JobURL != "" {
		fmt.Fprintf(b, "\n[Job log](%s)\n", res.JobURL)
	}
}

func (r Renderer) lockFailure(b *strings.Builder, res ProjectResult) {
	l := res.LockedBy
	pull := fmt.Sprintf("#%d", l.Pull)
	if l.URL != "" {
		pull = fmt.Sprintf("[#%d](%s)", l.Pull, l.URL)
	}
	by := ""
	if l.User != "" {
		by = " by @" + l.User
	}
	fmt.Fprintf(b, "**%s Failed**: This project is currently locked by an unapplied plan from pull %s%s. "+
		"To continue, delete the lock from %s or apply that plan and merge the pull request.\n\n",
		title(res.Command), pull, by, pull)
	fmt.Fprintf(b, "Once the lock is released, comment %s to plan this project again.\n", code(r.commandFor("plan", res)))
}

func (r Renderer) planFooter(b *strings.Builder) {
	if !strings.HasSuffix(b.String(), "---\n") {
		b.WriteString("\n---\n")
	}
	fmt.Fprintf(b, "* :fast_forward: To **apply** all unapplied plans from this pull request, comment: %s\n", code(r.exe()+" apply"))
	fmt.Fprintf(b, "* :put_litter_in_its_place: To **delete** all plans and locks from this pull request, comment: %s\n", code(r.exe()+" unlock"))
}

// summaryOf prefers the recorded summary and falls back to terraform's own
// summary line in the output.
func summaryOf(res ProjectResult) (atoll.Summary, bool) {
	if res.Summary != nil {
		return *res.Summary, true
	}
	return terraform.ParseSummaryLine(res.Output)
}

// unchangedPlan reports whether res is a plan that succeeded without
// changes, which --hide-unchanged-plan-comments leaves out. A failing
// policy check is shown all the same: Atoll tells it in the plan comment.
func unchangedPlan(res ProjectResult) bool {
	if res.Command != atoll.JobPlan || res.Error != "" || res.LockedBy != nil || res.HasChanges || !atoll.PoliciesSatisfied(res.Policies) {
		return false
	}
	s, ok := summaryOf(res)
	return ok && s.NoChanges()
}

func planLine(res ProjectResult) string {
	s, ok := summaryOf(res)
	switch {
	case !ok && res.HasChanges:
		return ""
	case !ok || s.NoChanges() && !res.HasChanges:
		return "No changes. Your infrastructure matches the configuration."
	}
	imports := ""
	if s.Import > 0 {
		imports = fmt.Sprintf("%d to import, ", s.Import)
	}
	return fmt.Sprintf("Plan: %s%d to add, %d to change, %d to destroy.", imports, s.Add, s.Change, s.Destroy)
}

func applyLine(res ProjectResult) string {
	s, ok := summaryOf(res)
	if !ok {
		return ""
	}
	imports := ""
	if s.Import > 0 {
		imports = fmt.Sprintf("%d imported, ", s.Import)
	}
	return fmt.Sprintf("Apply complete! Resources: %s%d added, %d changed, %d destroyed.", imports, s.Add, s.Change, s.Destroy)
}

func title(command string) string {
	if command == "" {
		return ""
	} else if command == atoll.JobStateRm {
		return "State `rm`" // as Atlantis names it
	}
	return strings.ToUpper(command[:1]) + command[1:]
}
