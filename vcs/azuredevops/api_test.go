package azuredevops_test

import (
	"context"
	"encoding/base64"
	"net/http"
	"strings"
	"testing"

	"github.com/atollhq/atoll"
	"github.com/atollhq/atoll/vcs"
	"github.com/atollhq/atoll/vcs/azuredevops"
	"github.com/atollhq/atoll/vcs/azuredevops/azuretest"
)

// The SDK finds each resource's route by OPTIONS on the organization's
// _apis, then calls it with the api-version in the Accept header.
func TestResourceDiscovery(t *testing.T) {
	srv := newFake(t)
	// An organization of its own: the SDK caches locations per URL for the
	// process, and a reused port could otherwise skip the OPTIONS.
	srv.AddPull("discovery", project, repoName, basePull())
	r := atoll.Repo{Owner: "discovery/" + project, Name: repoName}
	if _, err := newProvider(t, srv).GetPull(context.Background(), r, 7); err != nil {
		t.Fatal(err)
	}
	// OPTIONS, the pull request, and its policy evaluations (for
	// Mergeable), which live at the organization URL too.
	calls := srv.Calls()
	if len(calls) != 3 {
		t.Fatalf("calls = %+v", calls)
	}
	if c := calls[0]; c.Method != http.MethodOptions || c.Path != "/discovery/_apis" {
		t.Errorf("first call = %s %s; want OPTIONS /discovery/_apis", c.Method, c.Path)
	}
	if c := calls[1]; c.Method != http.MethodGet || c.Path != "/discovery/Infra Live/_apis/git/repositories/terraform/pullRequests/7" ||
		c.Accept != "application/json;api-version=7.1-preview.1" {
		t.Errorf("second call = %s %s Accept %q", c.Method, c.Path, c.Accept)
	}
	if c := calls[2]; c.Method != http.MethodGet || c.Path != "/discovery/Infra Live/_apis/policy/evaluations" {
		t.Errorf("third call = %s %s", c.Method, c.Path)
	}
}

// A refused credential is EUNAUTHORIZED from every method, and neither the
// token nor the Authorization value shows in the error.
func TestUnauthorized(t *testing.T) {
	srv := newFake(t)
	const wrong = "wrongtoken987"
	p := newProvider(t, srv, func(c *azuredevops.Config) { c.Credential = patCredential(wrong) })
	ctx := context.Background()
	calls := map[string]func() error{
		"GetPull":       func() error { _, err := p.GetPull(ctx, repo, 7); return err },
		"ChangedFiles":  func() error { _, err := p.ChangedFiles(ctx, repo, 7); return err },
		"CreateComment": func() error { _, err := p.CreateComment(ctx, repo, 7, "x"); return err },
		"ReplyComment":  func() error { _, err := p.ReplyComment(ctx, repo, 7, "1/1", "x"); return err },
		"UpdateComment": func() error { return p.UpdateComment(ctx, repo, 7, "1/1", "x") },
		"HideComments":  func() error { return p.HideComments(ctx, repo, 7, "plan") },
		"SetStatus": func() error {
			return p.SetStatus(ctx, repo, headSHA, vcs.Status{State: vcs.StatusPending, Context: "c"})
		},
		"Merge": func() error { return p.Merge(ctx, repo, 7, vcs.MergeOptions{Method: "squash", HeadSHA: headSHA}) },
	}
	for name, call := range calls {
		err := call()
		if atoll.ErrorCode(err) != atoll.EUNAUTHORIZED {
			t.Errorf("%s: err = %v; want EUNAUTHORIZED", name, err)
			continue
		}
		msg := err.Error()
		if strings.Contains(msg, wrong) || strings.Contains(msg, base64.StdEncoding.EncodeToString([]byte(":"+wrong))) {
			t.Errorf("%s: error %q shows the credential", name, msg)
		}
	}
	if got := srv.Pull(org, project, repoName, 7).Status; got != "active" || len(srv.Threads(org, project, repoName, 7)) != 0 {
		t.Error("a refused call changed something")
	}
}

// Bearer tokens are fetched for every call: an expired one is replaced
// without a new provider.
func TestBearerTokenRotates(t *testing.T) {
	srv := azuretest.NewServer(t)
	srv.AddPull(org, project, repoName, basePull())
	srv.AcceptBearer("token-one", bot)
	cred := &rotatingCredential{tokens: []string{"token-one", "token-two"}}
	p := newProvider(t, srv, func(c *azuredevops.Config) { c.Credential = cred })
	if _, err := p.GetPull(context.Background(), repo, 7); err != nil {
		t.Fatal(err)
	}
	// token-one expires: the server no longer takes it, and the credential
	// now hands out token-two.
	srv.Revoke("token-one")
	srv.AcceptBearer("token-two", bot)
	if _, err := p.CreateComment(context.Background(), repo, 7, "x"); err != nil {
		t.Fatal(err)
	}
	calls := srv.Calls()
	if first, last := calls[0].Auth, calls[len(calls)-1].Auth; first != "Bearer token-one" || last != "Bearer token-two" {
		t.Errorf("Authorization first %q, last %q", first, last)
	}
	if th := srv.Threads(org, project, repoName, 7); len(th) != 1 || th[0].Comments[0].Author != bot {
		t.Errorf("threads = %+v", th)
	}
}

// Azure DevOps Server: a virtual directory, a collection as organization,
// and an older API version the SDK negotiates down to.
func TestServerVirtualDirectory(t *testing.T) {
	srv := azuretest.NewServer(t, azuretest.WithVirtualDirectory("/tfs"), azuretest.WithAPIVersion("7.0"))
	srv.AcceptPAT(pat, bot)
	pr := basePull()
	pr.Changes = []azuretest.Change{{Path: "/main.tf"}}
	srv.AddPull("DefaultCollection", "Ops", "live", pr)
	p := newProvider(t, srv)
	onprem := atoll.Repo{VCS: atoll.VCSAzureDevOps, Host: p.Host(), Owner: "DefaultCollection/Ops", Name: "live"}
	ctx := context.Background()

	got, err := p.GetPull(ctx, onprem, 7)
	if err != nil {
		t.Fatal(err)
	}
	if want := srv.URL + "/DefaultCollection/Ops/_git/live/pullrequest/7"; got.URL != want || got.HeadSHA != headSHA {
		t.Errorf("URL %q head %q; want %q %q", got.URL, got.HeadSHA, want, headSHA)
	}
	if !strings.HasSuffix(p.Host(), "/tfs") {
		t.Errorf("Host = %q", p.Host())
	}
	files, err := p.ChangedFiles(ctx, onprem, 7)
	if err != nil || len(files) != 1 || files[0] != "main.tf" {
		t.Errorf("ChangedFiles = %q, %v", files, err)
	}
	if _, err := p.CreateComment(ctx, onprem, 7, "hello"); err != nil {
		t.Fatal(err)
	}
	if err := p.SetStatus(ctx, onprem, headSHA, vcs.Status{State: vcs.StatusSuccess, Context: "c"}); err != nil {
		t.Fatal(err)
	}
	if err := p.Merge(ctx, onprem, 7, vcs.MergeOptions{Method: "merge", HeadSHA: headSHA}); err != nil {
		t.Fatal(err)
	}
	if got := srv.Pull("DefaultCollection", "Ops", "live", 7); got.Status != "completed" || len(srv.PullStatuses("DefaultCollection", "Ops", "live", 7)) != 1 {
		t.Errorf("pull %+v", got)
	}
	for _, c := range srv.Calls() {
		if !strings.HasPrefix(c.Path, "/tfs/DefaultCollection/") {
			t.Errorf("%s %s: outside the collection", c.Method, c.Path)
		}
		if c.Method != http.MethodOptions && !strings.Contains(c.Accept, "api-version=7.0") {
			t.Errorf("%s %s: Accept %q; want the negotiated 7.0", c.Method, c.Path, c.Accept)
		}
	}
}

// The fake answers an unknown credential as Azure does, with an HTML page
// and 401 when the client suppresses the sign-in redirect.
func TestFakeRefusesLikeAzure(t *testing.T) {
	srv := newFake(t)
	req, _ := http.NewRequest(http.MethodOptions, srv.URL+"/contoso/_apis", nil)
	req.Header.Set("Authorization", "Basic "+base64.StdEncoding.EncodeToString([]byte(":nope")))
	req.Header.Set("X-TFS-FedAuthRedirect", "Suppress")
	resp, err := srv.Client().Do(req)
	if err != nil {
		t.Fatal(err)
	}
	resp.Body.Close()
	if resp.StatusCode != http.StatusUnauthorized || !strings.HasPrefix(resp.Header.Get("Content-Type"), "text/html") {
		t.Errorf("status %d, type %q", resp.StatusCode, resp.Header.Get("Content-Type"))
	}
	// Any user name goes with a PAT.
	req.Header.Set("Authorization", "Basic "+base64.StdEncoding.EncodeToString([]byte("someone:"+pat)))
	resp, err = srv.Client().Do(req)
	if err != nil {
		t.Fatal(err)
	}
	resp.Body.Close()
	if resp.StatusCode != http.StatusOK {
		t.Errorf("PAT with a user name: status %d", resp.StatusCode)
	}
}

// stripHeader drops a request header, as a meddling proxy might.
type stripHeader struct {
	name string
	base http.RoundTripper
}

func (s stripHeader) RoundTrip(r *http.Request) (*http.Response, error) {
	r = r.Clone(r.Context())
	r.Header.Del(s.name)
	return s.base.RoundTrip(r)
}

// Without the header that suppresses the sign-in redirect, Azure answers a
// refused credential with a sign-in page and 203: still EUNAUTHORIZED, not
// a JSON syntax error.
func TestUnauthorizedSignInPage(t *testing.T) {
	srv := newFake(t)
	hc := &http.Client{Transport: stripHeader{"X-TFS-FedAuthRedirect", http.DefaultTransport}}
	p := newProvider(t, srv, func(c *azuredevops.Config) { c.Credential, c.HTTPClient = patCredential("wrong"), hc })
	_, err := p.GetPull(context.Background(), repo, 7)
	if atoll.ErrorCode(err) != atoll.EUNAUTHORIZED {
		t.Errorf("err = %v; want EUNAUTHORIZED", err)
	}
	// With the right token the same client works.
	p = newProvider(t, srv, func(c *azuredevops.Config) { c.HTTPClient = hc })
	if _, err := p.GetPull(context.Background(), repo, 7); err != nil {
		t.Errorf("err = %v", err)
	}
}
