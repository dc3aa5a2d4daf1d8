package main

import (
	"log/slog"

	"github.com/atollhq/atoll/runner"
)

// hookConfig is the part of Config with Atlantis's flags about which
// projects a comment may target (hookflags.go).
type hookConfig struct{}

// configure hands the settings to the runner, once its server-side repo
// config is set.
func (c *hookConfig) configure(r *runner.Runner, log *slog.Logger) {
	if r.ServerConfig != nil && r.ServerConfig.TeamAuthz != nil && len(r.TeamAllowlist) > 0 {
		log.Warn("the server-side repo config's team_authz decides who runs what: --gh-team-allowlist is ignored, as in Atlantis")
	}
}
