package github

import (
	"context"
	"fmt"
	"net/http"
	"os"
	"strings"
	"sync"

	"github.com/atollhq/atoll"
	"github.com/bradleyfalzon/ghinstallation/v2"
	"github.com/google/go-github/v88/github"
)

// tokenAuth is a personal or bot access token: one client for every repo.
type tokenAuth struct {
	token string
	gh    *github.Client

	mu    sync.Mutex
	login string // the token's user, once looked up
}

// botLogin is the token's own login, for when Config.User is not set.
func (t *tokenAuth) botLogin(ctx context.Context) (string, error) {
	t.mu.Lock()
	defer t.mu.Unlock()
	if t.login == "" {
		u, _, err := t.gh.Users.Get(ctx, "")
		if err != nil {
			return "", apiError(err, "get authenticated user")
		}
		t.login = u.GetLogin()
	}
	return t.login, nil
}

func newTokenAuth(token string, base *http.Client, rest string) (*tokenAuth, error) {
	gh, err := github.NewClient(github.WithHTTPClient(base), github.WithAuthToken(token), github.WithURLs(&rest, nil))
	if err != nil {
		return nil, atoll.Errorf(atoll.EINVALID, "github: %v", err)
	}
	return &tokenAuth{token: token, gh: gh}, nil
}

// appAuth authenticates as a GitHub App. Each repository belongs to one
// installation, which has its own short-lived token; ghinstallation mints and
// refreshes those tokens.
type appAuth struct {
	id   int64
	key  []byte
	base *http.Client
	rest string
	jwt  *github.Client // authenticated as the App itself, for /app endpoints

	mu       sync.Mutex
	installs map[string]int64              // lower-cased owner/name → installation id
	clients  map[int64]*installationClient // installation id → client
	login    string                        // "<slug>[bot]", once looked up
}

type installationClient struct {
	tr *ghinstallation.Transport
	gh *github.Client
}

// newAppAuth authenticates as App appID with the key in keyFile or, when
// keyFile is "", key itself.
func newAppAuth(appID int64, keyFile string, key []byte, base *http.Client, rest string) (*appAuth, error) {
	what := "--gh-app-key"
	if keyFile != "" {
		var err error
		if key, err = os.ReadFile(keyFile); err != nil {
			return nil, atoll.Errorf(atoll.EINVALID, "github: cannot read app key file %s", keyFile)
		}
		what = "app key file " + keyFile
	}
	atr, err := ghinstallation.NewAppsTransport(transport(base), appID, key)
	if err != nil {
		return nil, atoll.Errorf(atoll.EINVALID, "github: %s is not an RSA private key in PEM form", what)
	}
	atr.BaseURL = strings.TrimSuffix(rest, "/")
	jwt, err := github.NewClient(github.WithHTTPClient(withTransport(base, atr)), github.WithURLs(&rest, nil))
	if err != nil {
		return nil, atoll.Errorf(atoll.EINVALID, "github: %v", err)
	}
	return &appAuth{
		id: appID, key: key, base: base, rest: rest, jwt: jwt,
		installs: map[string]int64{},
		clients:  map[int64]*installationClient{},
	}, nil
}

// remember records a repository's installation, as webhook payloads report
// it, which saves a lookup on the first API call.
func (a *appAuth) remember(fullName string, installationID int64) {
	if installationID == 0 {
		return
	}
	a.mu.Lock()
	a.installs[strings.ToLower(fullName)] = installationID
	a.mu.Unlock()
}

func (a *appAuth) forRepo(ctx context.Context, owner, name string) (*installationClient, error) {
	key := strings.ToLower(owner + "/" + name)
	a.mu.Lock()
	id, ok := a.installs[key]
	a.mu.Unlock()
	if !ok {
		inst, _, err := a.jwt.Apps.GetRepositoryInstallation(ctx, owner, name)
		if err != nil {
			return nil, apiError(err, "find app installation for %s/%s", owner, name)
		}
		id = inst.GetID()
		a.remember(key, id)
	}
	return a.forInstallation(id)
}

func (a *appAuth) forInstallation(id int64) (*installationClient, error) {
	a.mu.Lock()
	defer a.mu.Unlock()
	if c := a.clients[id]; c != nil {
		return c, nil
	}
	tr, err := ghinstallation.New(transport(a.base), a.id, id, a.key)
	if err != nil {
		return nil, fmt.Errorf("github: installation %d transport: %w", id, err)
	}
	tr.BaseURL = strings.TrimSuffix(a.rest, "/")
	// Token refreshes get the same timeout as API calls.
	tr.Client = &http.Client{Transport: transport(a.base), Timeout: a.base.Timeout}
	gh, err := github.NewClient(github.WithHTTPClient(withTransport(a.base, tr)), github.WithURLs(&a.rest, nil))
	if err != nil {
		return nil, fmt.Errorf("github: installation %d client: %w", id, err)
	}
	c := &installationClient{tr: tr, gh: gh}
	a.clients[id] = c
	return c, nil
}

// botLogin is the login GitHub shows on comments an App posts.
func (a *appAuth) botLogin(ctx context.Context) (string, error) {
	a.mu.Lock()
	login := a.login
	a.mu.Unlock()
	if login != "" {
		return login, nil
	}
	app, _, err := a.jwt.Apps.Get(ctx, "")
	if err != nil {
		return "", apiError(err, "get app %d", a.id)
	}
	login = app.GetSlug() + "[bot]"
	a.mu.Lock()
	a.login = login
	a.mu.Unlock()
	return login, nil
}

// client returns the REST client authorized for repo.
func (p *Provider) client(ctx context.Context, owner, name string) (*github.Client, error) {
	if p.token != nil {
		return p.token.gh, nil
	}
	c, err := p.app.forRepo(ctx, owner, name)
	if err != nil {
		return nil, err
	}
	return c.gh, nil
}

// accessToken is the token git uses to clone repo.
func (p *Provider) accessToken(ctx context.Context, owner, name string) (string, error) {
	if p.token != nil {
		return p.token.token, nil
	}
	c, err := p.app.forRepo(ctx, owner, name)
	if err != nil {
		return "", err
	}
	tok, err := c.tr.Token(ctx)
	if err != nil {
		return "", fmt.Errorf("github: installation token for %s/%s: %w", owner, name, err)
	}
	return tok, nil
}

// botLogin is the login whose comments are Atoll's own.
func (p *Provider) botLogin(ctx context.Context) (string, error) {
	if p.cfg.User != "" {
		return p.cfg.User, nil
	} else if p.token != nil {
		return p.token.botLogin(ctx)
	}
	return p.app.botLogin(ctx)
}

func transport(c *http.Client) http.RoundTripper {
	if c.Transport != nil {
		return c.Transport
	}
	return http.DefaultTransport
}

// withTransport copies c (timeout, jar, redirect policy) with rt swapped in.
func withTransport(c *http.Client, rt http.RoundTripper) *http.Client {
	cp := *c
	cp.Transport = rt
	return &cp
}
