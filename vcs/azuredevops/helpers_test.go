package azuredevops_test

import (
	"context"
	"encoding/base64"
	"strconv"
	"sync"
	"testing"

	"github.com/atollhq/atoll"
	"github.com/atollhq/atoll/vcs/azuredevops"
	"github.com/atollhq/atoll/vcs/azuredevops/azuretest"
)

// patCredential is a personal access token, sent as Azure documents it.
type patCredential string

func (c patCredential) Authorization(context.Context) (string, error) {
	return "Basic " + base64.StdEncoding.EncodeToString([]byte(":"+string(c))), nil
}

func (c patCredential) GitAuth(context.Context) (string, string, error) {
	return "atoll", string(c), nil
}

// rotatingCredential hands out bearer tokens in turn, as an expiring Entra
// ID token source does; Authorization is counted.
type rotatingCredential struct {
	mu     sync.Mutex
	tokens []string
	n      int
}

func (c *rotatingCredential) Authorization(context.Context) (string, error) {
	c.mu.Lock()
	defer c.mu.Unlock()
	tok := c.tokens[min(c.n, len(c.tokens)-1)]
	c.n++
	return "Bearer " + tok, nil
}

func (c *rotatingCredential) GitAuth(context.Context) (string, string, error) { return "x", "y", nil }

const (
	org      = "contoso"
	project  = "Infra Live" // a space, as project names often have
	repoName = "terraform"
	pat      = "patsecret0123456789"
	bot      = "atoll@contoso.com"
	author   = "alice@contoso.com"
	headSHA  = "1111111111111111111111111111111111111111"
	baseSHA  = "2222222222222222222222222222222222222222"
)

var repo = atoll.Repo{VCS: atoll.VCSAzureDevOps, Host: "dev.azure.com", Owner: org + "/" + project, Name: repoName}

// basePull is pull request 7 of the fixture repository.
func basePull() azuretest.Pull {
	return azuretest.Pull{Number: 7, Title: "Add VPC", Author: author, SourceRef: "feature/vpc", TargetRef: "main", HeadSHA: headSHA, BaseSHA: baseSHA}
}

// newFake starts a server accepting the PAT (as bot) holding basePull.
func newFake(t *testing.T, opts ...azuretest.Option) *azuretest.Server {
	t.Helper()
	srv := azuretest.NewServer(t, opts...)
	srv.AcceptPAT(pat, bot)
	srv.AddPull(org, project, repoName, basePull())
	return srv
}

func newProvider(t *testing.T, srv *azuretest.Server, mod ...func(*azuredevops.Config)) *azuredevops.Provider {
	t.Helper()
	cfg := azuredevops.Config{Hostname: srv.URL, Credential: patCredential(pat), User: bot, HTTPClient: srv.Client()}
	for _, m := range mod {
		m(&cfg)
	}
	p, err := azuredevops.New(cfg)
	if err != nil {
		t.Fatal(err)
	}
	return p
}

func itoa(n int) string { return strconv.Itoa(n) }
