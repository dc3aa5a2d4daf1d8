package azuredevops

import (
	"context"
	"fmt"
	"net/url"

	"github.com/atollhq/atoll"
	"github.com/atollhq/atoll/vcs"
)

// CloneURL returns ORGURL/PROJECT/_git/REPO on the configured host, with
// the credential's git user name and password (a PAT or an Entra ID
// token) as user info. It is built from the configuration, never from a
// payload, so a forged webhook cannot send the token elsewhere. The
// result holds a secret: never log it.
func (p *Provider) CloneURL(ctx context.Context, repo atoll.Repo) (string, error) {
	u, err := p.gitURL(repo)
	if err != nil {
		return "", err
	}
	user, pass, err := p.cfg.Credential.GitAuth(ctx)
	if err != nil {
		return "", fmt.Errorf("azuredevops git credentials: %w", err)
	}
	u.User = url.UserPassword(user, pass)
	return u.String(), nil
}

// CloneAuthorization implements vcs.CloneAuthorizer: the repository's
// URL on the configured host, without credentials, and the credential's
// Authorization value, which git sends as an extra header. With an Entra
// ID token that is "Bearer TOKEN", as Microsoft documents git over https
// with Entra ID tokens; with a PAT, basic auth with the PAT as password.
// The authorization is a secret: never log it.
func (p *Provider) CloneAuthorization(ctx context.Context, repo atoll.Repo) (string, string, error) {
	u, err := p.gitURL(repo)
	if err != nil {
		return "", "", err
	}
	auth, err := p.cfg.Credential.Authorization(ctx)
	if err != nil {
		return "", "", fmt.Errorf("azuredevops git credentials: %w", err)
	}
	return u.String(), auth, nil
}

// GitCredentials implements vcs.Provider: the git credential for the
// configured host (scheme and host only), for private module sources in
// other repositories of the same host.
func (p *Provider) GitCredentials(ctx context.Context, repo atoll.Repo) (vcs.GitCredential, error) {
	if _, err := p.gitURL(repo); err != nil {
		return vcs.GitCredential{}, err
	}
	return p.HostGitCredentials(ctx)
}

// gitURL is the credential-free URL git fetches repo from.
func (p *Provider) gitURL(repo atoll.Repo) (*url.URL, error) {
	org, project, name, err := repoPath(repo)
	if err != nil {
		return nil, err
	}
	u, err := url.Parse(p.webURL(org, project, name))
	if err != nil {
		return nil, atoll.Errorf(atoll.EINVALID, "repository %s has no valid clone URL", repo.FullName())
	}
	return u, nil
}

// HostGitCredentials implements vcs.HostCredentials: Atoll's identity on
// Azure DevOps reads every repository it was granted, whichever host the
// pull request being planned is on. Terraform's git gets them through a
// credential helper, which can only answer a user name and password (git
// before 2.46 has no bearer credentials for helpers): Azure Repos takes
// an Entra ID token as the password too, as Git Credential Manager sends
// it.
func (p *Provider) HostGitCredentials(ctx context.Context) (vcs.GitCredential, error) {
	user, pass, err := p.cfg.Credential.GitAuth(ctx)
	if err != nil {
		return vcs.GitCredential{}, fmt.Errorf("azuredevops git credentials: %w", err)
	}
	return vcs.GitCredential{URL: p.base.Scheme + "://" + p.base.Host, Username: user, Password: pass}, nil
}

var _ vcs.CloneAuthorizer = (*Provider)(nil)
