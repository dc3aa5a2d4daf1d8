package main

import (
	"flag"

	"github.com/atollhq/atoll/runner"
)

// labelsConfig holds Atlantis's flags about pull request labels and about
// what is left unsaid on the pull request, under their Atlantis names.
type labelsConfig struct {
	DisableAutoplanLabel  string
	DisableUnlockLabel    string
	DisableAutomergeLabel string

	SilenceVCSStatusNoPlans    bool
	SilenceVCSStatusNoProjects bool
	HideUnchangedPlanComments  bool
	DisableMarkdownFolding     bool
}

func labelsFlags(fs *flag.FlagSet, c *labelsConfig) {
	fs.StringVar(&c.DisableAutoplanLabel, "disable-autoplan-label", "", "do not autoplan pull requests with this label (a plan comment still plans)")
	fs.StringVar(&c.DisableUnlockLabel, "disable-unlock-label", "", "refuse the unlock comment on pull requests with this label (the dashboard's unlock is governed by roles, not labels)")
	fs.StringVar(&c.DisableAutomergeLabel, "disable-automerge-label", "", "do not automerge pull requests with this label")
	fs.BoolVar(&c.SilenceVCSStatusNoPlans, "silence-vcs-status-no-plans", false, "set no commit status when autoplan finds no projects (default: 0/0 successes)")
	fs.BoolVar(&c.SilenceVCSStatusNoProjects, "silence-vcs-status-no-projects", false, "set no commit status when autoplan finds no projects, nor when a plan comment does and --silence-no-projects is set")
	fs.BoolVar(&c.HideUnchangedPlanComments, "hide-unchanged-plan-comments", false, "leave plans without changes out of plan comments about several projects")
	fs.BoolVar(&c.DisableMarkdownFolding, "disable-markdown-folding", false, "show Terraform's output in comments unfolded (no <details>)")
}

// configure sets the runner's side of the flags.
func (c *labelsConfig) configure(r *runner.Runner) {
	r.DisableAutoplanLabel, r.DisableUnlockLabel, r.DisableAutomergeLabel = c.DisableAutoplanLabel, c.DisableUnlockLabel, c.DisableAutomergeLabel
	r.SilenceVCSStatusNoPlans, r.SilenceVCSStatusNoProjects = c.SilenceVCSStatusNoPlans, c.SilenceVCSStatusNoProjects
	r.Markdown.HideUnchangedPlans, r.Markdown.DisableFolding = c.HideUnchangedPlanComments, c.DisableMarkdownFolding
}
