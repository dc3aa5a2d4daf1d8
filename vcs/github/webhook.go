package github

import (
	"crypto/hmac"
	"crypto/sha256"
	"encoding/hex"
	"mime"
	"net/http"
	"net/url"
	"strconv"
	"strings"

	"github.com/atollhq/atoll"
	"github.com/atollhq/atoll/vcs"
	"github.com/google/go-github/v88/github"
)

// ParseWebhook authenticates a GitHub webhook by its X-Hub-Signature-256
// HMAC and reduces pull_request and issue_comment deliveries to an Event.
// Other events, and comments on plain issues, give (nil, nil).
func (p *Provider) ParseWebhook(r *http.Request, body []byte) (*vcs.Event, error) {
	if p.cfg.WebhookSecret == "" {
		// Without a secret anyone could trigger plans and applies.
		return nil, atoll.Errorf(atoll.EUNAUTHORIZED, "webhook secret not configured")
	}
	if err := verifySignature(r.Header.Get(github.SHA256SignatureHeader), body, []byte(p.cfg.WebhookSecret)); err != nil {
		return nil, err
	}
	payload, err := webhookPayload(r.Header.Get("Content-Type"), body)
	if err != nil {
		return nil, err
	}

	var ev *vcs.Event
	switch kind := github.WebHookType(r); kind {
	case "pull_request":
		ev, err = p.pullRequestEvent(payload)
	case "issue_comment":
		ev, err = p.issueCommentEvent(payload)
	default:
		return nil, nil // ping, push, check_suite, ...: nothing to do
	}
	if ev != nil {
		ev.DeliveryID = github.DeliveryID(r)
	}
	return ev, err
}

// verifySignature checks "sha256=<hex hmac>" in constant time. The legacy
// SHA-1 header is deliberately not accepted.
func verifySignature(header string, body, secret []byte) error {
	hexMAC, ok := strings.CutPrefix(header, "sha256=")
	if header == "" {
		return atoll.Errorf(atoll.EUNAUTHORIZED, "missing X-Hub-Signature-256 header")
	} else if !ok {
		return atoll.Errorf(atoll.EUNAUTHORIZED, "X-Hub-Signature-256 must start with sha256=")
	}
	got, err := hex.DecodeString(hexMAC)
	if err != nil {
		return atoll.Errorf(atoll.EUNAUTHORIZED, "malformed webhook signature")
	}
	mac := hmac.New(sha256.New, secret)
	mac.Write(body)
	if !hmac.Equal(got, mac.Sum(nil)) {
		return atoll.Errorf(atoll.EUNAUTHORIZED, "webhook signature does not match")
	}
	return nil
}

// webhookPayload returns the JSON of a delivery. GitHub signs the raw body,
// which for form-encoded webhooks wraps the JSON in a "payload" field.
func webhookPayload(contentType string, body []byte) ([]byte, error) {
	media, _, _ := mime.ParseMediaType(contentType)
	if media != "application/x-www-form-urlencoded" {
		return body, nil
	}
	form, err := url.ParseQuery(string(body))
	if err != nil || form.Get("payload") == "" {
		return nil, atoll.Errorf(atoll.EINVALID, "form-encoded webhook without a payload field")
	}
	return []byte(form.Get("payload")), nil
}

// pullActions maps the pull_request actions Atoll acts on.
var pullActions = map[string]string{
	"opened":      vcs.EventPullOpened,
	"reopened":    vcs.EventPullReopened,
	"synchronize": vcs.EventPullSynchronize,
	"closed":      vcs.EventPullClosed,
}

func (p *Provider) pullRequestEvent(payload []byte) (*vcs.Event, error) {
	parsed, err := github.ParseWebHook("pull_request", payload)
	if err != nil {
		return nil, atoll.Errorf(atoll.EINVALID, "invalid pull_request payload: %v", err)
	}
	e := parsed.(*github.PullRequestEvent)
	kind, ok := pullActions[e.GetAction()]
	if !ok {
		return nil, nil
	}
	if e.PullRequest == nil || e.Repo == nil {
		return nil, atoll.Errorf(atoll.EINVALID, "pull_request payload lacks pull_request or repository")
	}
	repo, err := p.repoFromPayload(e.Repo, e.Installation)
	if err != nil {
		return nil, err
	}
	pull := pullFromAPI(repo, e.PullRequest)
	user := e.GetSender().GetLogin()
	if user == "" {
		user = pull.Author
	}
	return &vcs.Event{
		Kind:   kind,
		Repo:   repo,
		Pull:   pull,
		Merged: kind == vcs.EventPullClosed && pull.State == atoll.PullMerged,
		User:   user,
	}, nil
}

func (p *Provider) issueCommentEvent(payload []byte) (*vcs.Event, error) {
	parsed, err := github.ParseWebHook("issue_comment", payload)
	if err != nil {
		return nil, atoll.Errorf(atoll.EINVALID, "invalid issue_comment payload: %v", err)
	}
	e := parsed.(*github.IssueCommentEvent)
	// Edits and deletions are not commands; plain issues have no plans.
	if e.GetAction() != "created" || !e.GetIssue().IsPullRequest() {
		return nil, nil
	}
	if e.Comment == nil || e.Repo == nil {
		return nil, atoll.Errorf(atoll.EINVALID, "issue_comment payload lacks comment or repository")
	}
	repo, err := p.repoFromPayload(e.Repo, e.Installation)
	if err != nil {
		return nil, err
	}
	issue := e.GetIssue()
	return &vcs.Event{
		Kind: vcs.EventComment,
		Repo: repo,
		// An issue payload carries no head or base; callers fetch those.
		Pull: atoll.Pull{
			Repo:   repo.FullName(),
			Number: issue.GetNumber(),
			Title:  issue.GetTitle(),
			Author: issue.GetUser().GetLogin(),
			URL:    issue.GetPullRequestLinks().GetHTMLURL(),
		},
		User:      e.GetComment().GetUser().GetLogin(),
		Comment:   e.GetComment().GetBody(),
		CommentID: strconv.FormatInt(e.GetComment().GetID(), 10),
	}, nil
}

// repoFromPayload also remembers the App installation the payload names.
func (p *Provider) repoFromPayload(r *github.Repository, inst *github.Installation) (atoll.Repo, error) {
	repo := atoll.Repo{
		VCS:      atoll.VCSGitHub,
		Host:     p.host,
		Owner:    r.GetOwner().GetLogin(),
		Name:     r.GetName(),
		CloneURL: r.GetCloneURL(),
		HTMLURL:  r.GetHTMLURL(),
	}
	if repo.Owner == "" || repo.Name == "" {
		return atoll.Repo{}, atoll.Errorf(atoll.EINVALID, "webhook repository lacks owner or name")
	}
	if p.app != nil {
		p.app.remember(repo.FullName(), inst.GetID())
	}
	return repo, nil
}
