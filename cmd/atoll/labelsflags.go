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
}

func labelsFlags(fs *flag.FlagSet, c *labelsConfig) {
	fs.StringVar(&c.DisableAutoplanLabel, "disable-autoplan-label", "", "do not autoplan pull requests with this label (a plan comment still plans)")
	fs.StringVar(&c.DisableUnlockLabel, "disable-unlock-label", "", "refuse the unlock comment on pull requests with this label (the dashboard's unlock is governed by roles, not labels)")
	fs.StringVar(&c.DisableAutomergeLabel, "disable-automerge-label", "", "do not automerge pull requests with this label")
}

// configure sets the runner's side of the flags.
func (c *labelsConfig) configure(r *runner.Runner) {
	r.DisableAutoplanLabel, r.DisableUnlockLabel, r.DisableAutomergeLabel = c.DisableAutoplanLabel, c.DisableUnlockLabel, c.DisableAutomergeLabel
}
