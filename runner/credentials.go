package runner

import (
	"context"
	"maps"
	"slices"

	"github.com/atollhq/atoll/gitcred"
	"github.com/atollhq/atoll/vcs"
)

// grantCredentials lets the Terraform runs of w's jobs (and the git that
// terraform init runs for module sources) authenticate to the pull
// request's host through Atoll's credential helper, until the returned
// function revokes the grant. The other configured hosts whose credentials
// do not depend on the repository (vcs.HostCredentials) are served too, so
// that a module on Azure Repos clones in a GitHub pull request's run and
// the reverse. Without a credential server, or for hosts that need no
// credentials, nothing is granted. A host whose credentials cannot be had
// now is logged and not granted: modules on it then fail to clone, with
// git's message in the job's log.
func (r *Runner) grantCredentials(ctx context.Context, w *work) func() {
	if r.Credentials == nil {
		return func() {}
	}
	repo := *w.repo
	// Asked again each time git asks: tokens expire.
	sources := []gitcred.Source{r.credentialSource(ctx, w, func(ctx context.Context) (vcs.GitCredential, error) {
		return w.vcs.GitCredentials(ctx, repo)
	})}
	for _, kind := range slices.Sorted(maps.Keys(r.Providers)) {
		if hc, ok := vcs.As[vcs.HostCredentials](r.Providers[kind]); ok && kind != w.repo.VCS {
			sources = append(sources, r.credentialSource(ctx, w, hc.HostGitCredentials))
		}
	}
	env, revokeGrant := r.Credentials.Grant(sources...)
	w.credEnv = env
	return func() {
		revokeGrant()
		w.credEnv = nil
	}
}

// credentialSource asks get once, to learn the host it serves; a host with
// no credentials (or none now) gives a Source the grant skips.
func (r *Runner) credentialSource(ctx context.Context, w *work, get func(context.Context) (vcs.GitCredential, error)) gitcred.Source {
	cred, err := get(ctx)
	if err != nil {
		w.log.Warn("git credentials for terraform", "err", err)
		return gitcred.Source{}
	}
	if cred.URL == "" {
		return gitcred.Source{}
	}
	return gitcred.Source{URL: cred.URL, Get: get}
}
