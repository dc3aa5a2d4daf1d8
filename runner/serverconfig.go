package runner

import (
	"github.com/atollhq/atoll"
	"github.com/atollhq/atoll/repocfg"
)

// loadConfig reads the repository's config file in the checkout at root,
// merged with the server-side repo config: the server's requirements and
// workflow apply unless the server lets the file override them.
func (r *Runner) loadConfig(w *work, root string) (*repocfg.Config, error) {
	return r.ServerConfig.Load(root, serverRepoID(w.repo), w.pull.BaseRef)
}

// serverRepoID is the repository's id in a server-side repo config:
// host/owner/name, as Atlantis writes it (github.com/org/repo;
// dev.azure.com/org/project/repo).
func serverRepoID(r *atoll.Repo) string { return r.Host + "/" + r.FullName() }
