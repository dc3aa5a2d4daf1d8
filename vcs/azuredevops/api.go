package azuredevops

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"io"
	"mime"
	"net/http"
	"time"

	"github.com/atollhq/atoll"
	"github.com/atollhq/atoll/vcs"
	"github.com/microsoft/azure-devops-go-api/azuredevops/v7"
	"github.com/microsoft/azure-devops-go-api/azuredevops/v7/git"
)

var (
	_ vcs.Provider = (*Provider)(nil)
	_ vcs.Replier  = (*Provider)(nil)
)

// defaultTimeout bounds API calls when the caller gives no HTTP client, so
// a hung server cannot wedge a worker forever.
const defaultTimeout = 30 * time.Second

// apiHTTPClient is c (or a client with defaultTimeout) whose transport
// turns error answers without a JSON body into empty ones: the SDK parses
// any non-text/plain error body as JSON and, when that fails, returns the
// JSON syntax error instead of the status code (Azure answers a bad
// credential with an HTML page).
func apiHTTPClient(c *http.Client) *http.Client {
	var hc http.Client
	if c != nil {
		hc = *c
	} else {
		hc.Timeout = defaultTimeout
	}
	base := hc.Transport
	if base == nil {
		base = http.DefaultTransport
	}
	hc.Transport = errorBodyTransport{base}
	return &hc
}

type errorBodyTransport struct{ base http.RoundTripper }

func (t errorBodyTransport) RoundTrip(r *http.Request) (*http.Response, error) {
	resp, err := t.base.RoundTrip(r)
	if err != nil {
		return resp, err
	}
	mt, _, _ := mime.ParseMediaType(resp.Header.Get("Content-Type"))
	// Without X-TFS-FedAuthRedirect honoured, a refused credential gets a
	// sign-in page with 203: that is a 401 too.
	if resp.StatusCode == http.StatusNonAuthoritativeInfo && mt == "text/html" {
		resp.StatusCode, resp.Status = http.StatusUnauthorized, "401 Unauthorized"
	}
	if resp.StatusCode < 300 || mt == "application/json" || mt == "text/plain" {
		return resp, nil
	}
	io.Copy(io.Discard, io.LimitReader(resp.Body, 1<<20))
	resp.Body.Close()
	resp.Body = io.NopCloser(bytes.NewReader(nil))
	resp.ContentLength = 0
	return resp, nil
}

// repoClient is the Git client of repo's organization, with the project
// and repository names the API calls take.
func (p *Provider) repoClient(ctx context.Context, repo atoll.Repo) (gc *git.ClientImpl, project, name string, err error) {
	org, project, name, err := repoPath(repo)
	if err != nil {
		return nil, "", "", err
	}
	gc, err = p.gitClient(ctx, org)
	return gc, project, name, err
}

// gitClient returns an SDK client for org's Git API. The Authorization
// value is fetched per call because Entra ID tokens expire; an SDK client
// is a small struct bound to one such value, so one is built per call
// (the SDK caches resource locations per URL, globally, so building one
// costs no request). The client is bound to the organization URL rather
// than resolved through ResourceAreas: Git lives at the organization URL
// on both Services and Server.
func (p *Provider) gitClient(ctx context.Context, org string) (*git.ClientImpl, error) {
	auth, err := p.cfg.Credential.Authorization(ctx)
	if err != nil {
		return nil, fmt.Errorf("azuredevops credentials: %w", err)
	}
	conn := &azuredevops.Connection{AuthorizationString: auth, SuppressFedAuthRedirect: true, UserAgent: "atoll"}
	c := azuredevops.NewClientWithOptions(conn, p.orgURL(org), azuredevops.WithHTTPClient(p.http))
	return &git.ClientImpl{Client: *c}, nil
}

// apiError wraps an API error with what was being done and, where the
// status means something to a user, an *atoll.Error code ahead of the
// original error so that atoll.ErrorCode finds it. The SDK's errors carry
// the server's message and status, never the request's headers.
func apiError(err error, format string, args ...any) error {
	what := fmt.Sprintf(format, args...)
	if code := errorCode(err); code != "" {
		coded := atoll.Errorf(code, "Azure DevOps: %s: %s", what, codeText[code])
		return fmt.Errorf("azuredevops %s: %w: %w", what, coded, err)
	}
	return fmt.Errorf("azuredevops %s: %w", what, err)
}

var codeText = map[string]string{
	atoll.EUNAUTHORIZED: "the credentials were refused (expired or revoked token?)",
	atoll.EFORBIDDEN:    "the credentials lack a permission (the token's scopes or the account's project rights)",
	atoll.ENOTFOUND:     "not found",
	atoll.ECONFLICT:     "conflict",
	atoll.EUNAVAILABLE:  "rate limited or unavailable, try again later",
}

// statusCode is the HTTP status of an SDK error, 0 when there is none.
func statusCode(err error) int {
	var we azuredevops.WrappedError
	var wp *azuredevops.WrappedError
	switch {
	case errors.As(err, &wp) && wp != nil && wp.StatusCode != nil:
		return *wp.StatusCode
	case errors.As(err, &we) && we.StatusCode != nil:
		return *we.StatusCode
	}
	return 0
}

func errorCode(err error) string {
	switch statusCode(err) {
	case http.StatusUnauthorized:
		return atoll.EUNAUTHORIZED
	case http.StatusForbidden:
		return atoll.EFORBIDDEN
	case http.StatusNotFound:
		return atoll.ENOTFOUND
	case http.StatusConflict:
		return atoll.ECONFLICT
	case http.StatusTooManyRequests, http.StatusServiceUnavailable:
		return atoll.EUNAVAILABLE
	}
	return ""
}

// ptr returns a pointer to v, for the SDK's all-pointer models.
func ptr[T any](v T) *T { return &v }
