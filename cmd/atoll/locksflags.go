package main

import (
	"flag"

	"github.com/atollhq/atoll/runner"
)

// locksConfig is the part of Config with Atlantis's locking flag.
type locksConfig struct {
	// DisableRepoLocking: --disable-repo-locking, every project as
	// repo_locks mode disabled whatever the repo configs say.
	DisableRepoLocking bool
}

func locksFlags(fs *flag.FlagSet, c *locksConfig) {
	fs.BoolVar(&c.DisableRepoLocking, "disable-repo-locking", false,
		"take and check no project locks for any repository, as repo_locks mode disabled: two pull requests can then apply the same project")
}

// configure hands the setting to the runner.
func (c *locksConfig) configure(r *runner.Runner) { r.DisableRepoLocking = c.DisableRepoLocking }
