package runner

import (
	"context"

	"github.com/atollhq/atoll/gitcred"
	"github.com/atollhq/atoll/vcs"
)

// grantCredentials lets the Terraform runs of w's jobs (and the git that
// terraform init runs for module sources) authenticate to the pull
// request's host through Atoll's credential helper, until the returned
// function revokes the grant. Without a credential server, or for a host
// that needs no credentials, nothing is granted. A host whose credentials
// cannot be had now is logged and not granted: modules on it then fail to
// clone, with git's message in the job's log.
func (r *Runner) grantCredentials(ctx context.Context, w *work) func() {
	if r.Credentials == nil {
		return func() {}
	}
	repo := *w.repo
	cred, err := w.vcs.GitCredentials(ctx, repo)
	if err != nil {
		w.log.Warn("git credentials for terraform", "err", err)
		return func() {}
	}
	if cred.URL == "" {
		return func() {}
	}
	// Asked again each time git asks: App installation tokens expire.
	get := func(ctx context.Context) (vcs.GitCredential, error) { return w.vcs.GitCredentials(ctx, repo) }
	env, revokeGrant := r.Credentials.Grant(gitcred.Source{URL: cred.URL, Get: get})
	w.credEnv = env
	return func() {
		revokeGrant()
		w.credEnv = nil
	}
}
