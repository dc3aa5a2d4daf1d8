package demo

import (
	"regexp"

	"github.com/atollhq/atoll/repocfg"
)

// ServerConfig is --repo-config in demo mode (unless one is given): the
// demo repository's atlantis.yaml sets production's apply_requirements,
// which a repository may do only when the server-side repo config allows
// it, as in Atlantis. Written out, it is:
//
//	repos:
//	  - id: /.*/
//	    allowed_overrides: [apply_requirements]
func ServerConfig() *repocfg.ServerConfig {
	sc := repocfg.DefaultServerConfig()
	sc.Repos = append(sc.Repos, repocfg.ServerRepo{IDRegex: regexp.MustCompile(".*"),
		AllowedOverrides: []string{repocfg.KeyApplyRequirements}, Line: 2})
	return sc
}
