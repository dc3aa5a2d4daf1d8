package github

import (
	"context"
	"net/url"

	"github.com/atollhq/atoll"
	"github.com/atollhq/atoll/vcs"
)

// CloneURL returns an https URL with the token (or App installation token)
// as password. The user name is ignored by GitHub for token auth;
// x-access-token is what installation tokens document. The result holds a
// secret: never log it.
func (p *Provider) CloneURL(ctx context.Context, repo atoll.Repo) (string, error) {
	u, err := p.gitURL(repo)
	if err != nil {
		return "", err
	}
	if u.Scheme != "http" && u.Scheme != "https" {
		return u.String(), nil // file:// and the like take no credentials
	}
	token, err := p.accessToken(ctx, repo.Owner, repo.Name)
	if err != nil {
		return "", err
	}
	u.User = url.UserPassword("x-access-token", token)
	return u.String(), nil
}

// GitCredentials implements vcs.Provider: the token (or the installation
// token of repo's App installation, which also reads the other repositories
// the installation was granted) for the host repositories are cloned from.
func (p *Provider) GitCredentials(ctx context.Context, repo atoll.Repo) (vcs.GitCredential, error) {
	u, err := p.gitURL(repo)
	if err != nil {
		return vcs.GitCredential{}, err
	}
	if u.Scheme != "http" && u.Scheme != "https" {
		return vcs.GitCredential{}, nil
	}
	token, err := p.accessToken(ctx, repo.Owner, repo.Name)
	if err != nil {
		return vcs.GitCredential{}, err
	}
	return vcs.GitCredential{URL: u.Scheme + "://" + u.Host, Username: "x-access-token", Password: token}, nil
}

// gitURL is the credential-free URL git fetches repo from.
func (p *Provider) gitURL(repo atoll.Repo) (*url.URL, error) {
	if repo.Owner == "" || repo.Name == "" {
		return nil, atoll.Errorf(atoll.EINVALID, "repository needs an owner and a name to clone")
	}
	u := &url.URL{Scheme: "https", Host: p.host, Path: "/" + repo.Owner + "/" + repo.Name + ".git"}
	// With a custom API URL (a proxy, a test server) the git host cannot be
	// derived, so the URL the webhook payload reported is used instead.
	if p.customAPI && repo.CloneURL != "" {
		var err error
		if u, err = url.Parse(repo.CloneURL); err != nil {
			return nil, atoll.Errorf(atoll.EINVALID, "repository %s has an invalid clone URL", repo.FullName())
		}
		u.User = nil
	}
	return u, nil
}

// HostGitCredentials implements vcs.HostCredentials with a token: it is
// good for every repository the token reads, so it is served to pull
// requests on other hosts too. An App's installation tokens are per
// installation, and with --gh-api-url the git host is not known without a
// repository: both serve nothing beyond their own pull requests.
func (p *Provider) HostGitCredentials(ctx context.Context) (vcs.GitCredential, error) {
	if p.token == nil || p.customAPI {
		return vcs.GitCredential{}, nil
	}
	return vcs.GitCredential{URL: "https://" + p.host, Username: "x-access-token", Password: p.token.token}, nil
}
