package github

import (
	"net/http"
	"strconv"

	"github.com/atollhq/atoll"
	"github.com/google/go-github/v88/github"
)

// Recognizer recognises GitHub webhooks, configured or not.
type Recognizer struct{}

// Kind reports atoll.VCSGitHub.
func (Recognizer) Kind() string { return atoll.VCSGitHub }

// Recognizes reports whether h carries GitHub's event header.
func (Recognizer) Recognizes(h http.Header) bool { return h.Get(github.EventTypeHeader) != "" }

// WebhookHint names the header Recognizes looks for.
func (Recognizer) WebhookHint() string { return "an X-GitHub-Event header" }

// Recognizes implements vcs.Recognizer.
func (p *Provider) Recognizes(h http.Header) bool { return Recognizer{}.Recognizes(h) }

// WebhookHint implements vcs.Recognizer.
func (p *Provider) WebhookHint() string { return Recognizer{}.WebhookHint() }

// PullRefs implements vcs.Provider: GitHub keeps every pull request's head,
// a fork's included, at refs/pull/N/head in the base repository.
func (p *Provider) PullRefs(number int) []string {
	return []string{"refs/pull/" + strconv.Itoa(number) + "/head"}
}
