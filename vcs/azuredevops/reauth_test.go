package azuredevops_test

import (
	"context"
	"strings"
	"testing"

	"github.com/atollhq/atoll"
	"github.com/atollhq/atoll/vcs/azuredevops"
	"github.com/atollhq/atoll/vcs/azuredevops/azuretest"
)

// bearerCalls are the Authorization values the server saw, in order.
func bearerCalls(srv *azuretest.Server) []string {
	var out []string
	for _, c := range srv.Calls() {
		out = append(out, c.Method+" "+c.Auth)
	}
	return out
}

// Azure DevOps refuses an Entra ID token before its expiry (revoked, a
// clock that is off): the provider drops it from the cache once and
// retries with a new one, body and all.
func TestStaleEntraTokenRetriedOnce(t *testing.T) {
	f := newFakeEntra(t)
	cred := f.credential(newClock(), clientSecret)
	srv := azuretest.NewServer(t)
	srv.AddPull(org, project, repoName, basePull())
	srv.AcceptBearer("tok-1", bot)
	p := newProvider(t, srv, func(c *azuredevops.Config) { c.Credential = cred })
	ctx := context.Background()
	if _, err := p.GetPull(ctx, repo, 7); err != nil {
		t.Fatal(err)
	}

	// tok-1 goes stale while the cache still trusts it.
	srv.Revoke("tok-1")
	srv.AcceptBearer("tok-2", bot)
	before := len(srv.Calls())
	if _, err := p.CreateComment(ctx, repo, 7, "after the token went stale"); err != nil {
		t.Fatalf("CreateComment after a stale token: %v", err)
	}
	th := srv.Threads(org, project, repoName, 7)
	if len(th) != 1 || th[0].Comments[0].Content != "after the token went stale" {
		t.Fatalf("threads = %+v; want the comment, sent again with its body", th)
	}
	var refused, retried int
	for _, c := range srv.Calls()[before:] {
		switch c.Auth {
		case "Bearer tok-1":
			refused++
		case "Bearer tok-2":
			retried++
		default:
			t.Errorf("call with %q", c.Auth)
		}
	}
	if refused != 1 || retried == 0 {
		t.Errorf("calls after the revocation: %v; want one refused with tok-1, then tok-2", bearerCalls(srv)[before:])
	}
	if n := f.requests.Load(); n != 2 {
		t.Errorf("%d token requests; want 2", n)
	}
	// The new token is kept: no more token requests.
	if _, err := p.GetPull(ctx, repo, 7); err != nil || f.requests.Load() != 2 {
		t.Errorf("GetPull = %v with %d token requests", err, f.requests.Load())
	}
}

// A token refused again after renewal is an error, after one retry only;
// it names neither token.
func TestRefusedEntraTokenNotRetriedTwice(t *testing.T) {
	f := newFakeEntra(t)
	cred := f.credential(newClock(), clientSecret)
	srv := azuretest.NewServer(t)
	srv.AddPull(org, project, repoName, basePull())
	p := newProvider(t, srv, func(c *azuredevops.Config) { c.Credential = cred })
	_, err := p.GetPull(context.Background(), repo, 7)
	if atoll.ErrorCode(err) != atoll.EUNAUTHORIZED {
		t.Fatalf("err = %v; want EUNAUTHORIZED", err)
	}
	if strings.Contains(err.Error(), "tok-") {
		t.Errorf("error %q shows a token", err)
	}
	if n := len(srv.Calls()); n != 2 {
		t.Errorf("calls = %v; want the refused one and one retry", bearerCalls(srv))
	}
	if n := f.requests.Load(); n != 2 {
		t.Errorf("%d token requests; want 2", n)
	}
}

// A PAT has no cache to renew: its 401 comes back at once.
func TestRefusedPATNotRetried(t *testing.T) {
	srv := azuretest.NewServer(t)
	srv.AddPull(org, project, repoName, basePull())
	p := newProvider(t, srv) // the PAT is not accepted
	if _, err := p.GetPull(context.Background(), repo, 7); atoll.ErrorCode(err) != atoll.EUNAUTHORIZED {
		t.Fatalf("err = %v; want EUNAUTHORIZED", err)
	}
	if n := len(srv.Calls()); n != 1 {
		t.Errorf("calls = %v; want one", bearerCalls(srv))
	}
}
