package github

import (
	"context"
	"net/url"

	"github.com/atollhq/atoll"
)

// CloneURL returns an https URL with the token (or App installation token)
// as password. The user name is ignored by GitHub for token auth;
// x-access-token is what installation tokens document. The result holds a
// secret: never log it.
func (p *Provider) CloneURL(ctx context.Context, repo atoll.Repo) (string, error) {
	if repo.Owner == "" || repo.Name == "" {
		return "", atoll.Errorf(atoll.EINVALID, "repository needs an owner and a name to clone")
	}
	token, err := p.accessToken(ctx, repo.Owner, repo.Name)
	if err != nil {
		return "", err
	}
	u := &url.URL{Scheme: "https", Host: p.host, Path: "/" + repo.Owner + "/" + repo.Name + ".git"}
	// With a custom API URL (a proxy, a test server) the git host cannot be
	// derived, so the URL the webhook payload reported is used instead.
	if p.customAPI && repo.CloneURL != "" {
		if u, err = url.Parse(repo.CloneURL); err != nil {
			return "", atoll.Errorf(atoll.EINVALID, "repository %s has an invalid clone URL", repo.FullName())
		}
		if u.Scheme != "http" && u.Scheme != "https" {
			return u.String(), nil // file:// and the like take no credentials
		}
	}
	u.User = url.UserPassword("x-access-token", token)
	return u.String(), nil
}
