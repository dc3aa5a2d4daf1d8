package main

import (
	"flag"
	"log/slog"

	"github.com/atollhq/atoll/runner"
)

// hookConfig is the part of Config with Atlantis's flags about which
// projects a comment may target (hookflags.go).
type hookConfig struct {
	// EnableRegexpCmd: --enable-regexp-cmd, -p/--project is a regular
	// expression over project names.
	EnableRegexpCmd bool
	// RestrictFileList: --restrict-file-list, a plan with -d or -p must
	// target what the pull request modifies.
	RestrictFileList bool
}

func hookFlags(fs *flag.FlagSet, c *hookConfig) {
	fs.BoolVar(&c.EnableRegexpCmd, "enable-regexp-cmd", false, "read a comment's -p/--project as a regular expression over the names of atlantis.yaml's projects (whole names; allowed_regexp_prefixes limits those selecting several)")
	fs.BoolVar(&c.RestrictFileList, "restrict-file-list", false, "refuse a plan comment whose -d names a directory without modified files, or whose -p leaves modified files outside the projects it names")
}

// configure hands the settings to the runner, once its server-side repo
// config is set.
func (c *hookConfig) configure(r *runner.Runner, log *slog.Logger) {
	r.Parser.EnableRegexpCmd, r.RestrictFileList = c.EnableRegexpCmd, c.RestrictFileList
	if r.ServerConfig != nil && r.ServerConfig.TeamAuthz != nil && len(r.TeamAllowlist) > 0 {
		log.Warn("the server-side repo config's team_authz decides who runs what: --gh-team-allowlist is ignored, as in Atlantis")
	}
}
