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

// CheckWebhook requires a well-formed X-Hub-Signature-256 header
// (sha256=<64 hex digits>), so that unsigned bodies are refused unread.
func (p *Provider) CheckWebhook(h http.Header) error {
	if p.cfg.WebhookSecret == "" {
		// Without a secret anyone could trigger plans and applies.
		return atoll.Errorf(atoll.EUNAUTHORIZED, "webhook secret not configured")
	}
	_, err := parseSignature(h.Get(github.SHA256SignatureHeader))
	return err
}

// ParseWebhook authenticates a GitHub webhook by its X-Hub-Signature-256
// HMAC and reduces pull_request and issue_comment deliveries to an Event.
// Other events, and comments on plain issues, give (nil, nil).
func (p *Provider) ParseWebhook(r *http.Request, body []byte) (*vcs.Event, error) {
	if err := p.CheckWebhook(r.Header); err != nil {
		return nil, err
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

// parseSignature decodes "sha256=<64 hex digits>". The legacy SHA-1 header
// is deliberately not accepted.
func parseSignature(header string) ([]byte, error) {
	hexMAC, ok := strings.CutPrefix(header, "sha256=")
	if header == "" {
		return nil, atoll.Errorf(atoll.EUNAUTHORIZED, "missing X-Hub-Signature-256 header")
	} else if !ok {
		return nil, atoll.Errorf(atoll.EUNAUTHORIZED, "X-Hub-Signature-256 must start with sha256=")
	}
	mac, err := hex.DecodeString(hexMAC)
	if err != nil || len(mac) != sha256.Size {
		return nil, atoll.Errorf(atoll.EUNAUTHORIZED, "malformed webhook signature: want sha256= and 64 hex digits")
	}
	return mac, nil
}

// verifySignature checks the header's HMAC of body in constant time.
func verifySignature(header string, body, secret []byte) error {
	got, err := parseSignature(header)
	if err != nil {
		return err
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
	// GitHub sends this when a draft is marked ready; Atlantis treats it
	// as a fresh open, which is what autoplans a former draft.
	"ready_for_review": vcs.EventPullReady,
}

func (p *Provider) pullRequestEvent(payload []byte) (*vcs.Event, error) {
	var e pullRequestHook
	if err := decodeHook(payload, &e); err != nil {
		return nil, atoll.Errorf(atoll.EINVALID, "invalid pull_request payload: %v", err)
	}
	kind, ok := pullActions[e.Action]
	if !ok {
		return nil, nil
	}
	if e.PullRequest == nil || e.Repository == nil {
		return nil, atoll.Errorf(atoll.EINVALID, "pull_request payload lacks pull_request or repository")
	}
	repo, err := p.repoFromPayload(e.Repository, e.Installation)
	if err != nil {
		return nil, err
	}
	pr := e.PullRequest
	// Only the merged flag counts, as for API responses.
	state := pr.State
	if pr.Merged {
		state = atoll.PullMerged
	}
	pull := atoll.Pull{Repo: repo.FullName(), Number: pr.Number, Title: pr.Title, Author: pr.User.Login,
		HeadSHA: pr.Head.SHA, HeadRef: pr.Head.Ref, BaseSHA: pr.Base.SHA, BaseRef: pr.Base.Ref,
		State: state, URL: pr.HTMLURL, CreatedAt: pr.CreatedAt, UpdatedAt: pr.UpdatedAt}
	user := e.Sender.Login
	if user == "" {
		user = pull.Author
	}
	return &vcs.Event{
		Kind:   kind,
		Repo:   repo,
		Pull:   pull,
		Merged: kind == vcs.EventPullClosed && pull.State == atoll.PullMerged,
		Draft:  pr.Draft,
		User:   user,
	}, nil
}

func (p *Provider) issueCommentEvent(payload []byte) (*vcs.Event, error) {
	var e issueCommentHook
	if err := decodeHook(payload, &e); err != nil {
		return nil, atoll.Errorf(atoll.EINVALID, "invalid issue_comment payload: %v", err)
	}
	// Edits and deletions are not commands; plain issues have no plans.
	if e.Action != "created" || e.Issue.PullRequest == nil {
		return nil, nil
	}
	if e.Comment == nil || e.Repository == nil {
		return nil, atoll.Errorf(atoll.EINVALID, "issue_comment payload lacks comment or repository")
	}
	repo, err := p.repoFromPayload(e.Repository, e.Installation)
	if err != nil {
		return nil, err
	}
	return &vcs.Event{
		Kind: vcs.EventComment,
		Repo: repo,
		// An issue payload carries no head or base; callers fetch those.
		Pull: atoll.Pull{
			Repo:   repo.FullName(),
			Number: e.Issue.Number,
			Title:  e.Issue.Title,
			Author: e.Issue.User.Login,
			URL:    e.Issue.PullRequest.HTMLURL,
		},
		User:      e.Comment.User.Login,
		Comment:   e.Comment.Body,
		CommentID: strconv.FormatInt(e.Comment.ID, 10),
	}, nil
}

// repoFromPayload also remembers the App installation the payload names.
// GitHub names are case-insensitive (ACME/Infra is acme/infra): they are
// lower-cased so that one repository has one identity, hence one set of
// locks. HTMLURL keeps GitHub's spelling for links.
func (p *Provider) repoFromPayload(r *hookRepo, inst *hookInstallation) (atoll.Repo, error) {
	repo := atoll.Repo{
		VCS:      atoll.VCSGitHub,
		Host:     p.host,
		Owner:    strings.ToLower(r.Owner.Login),
		Name:     strings.ToLower(r.Name),
		CloneURL: r.CloneURL,
		HTMLURL:  r.HTMLURL,
	}
	if repo.Owner == "" || repo.Name == "" {
		return atoll.Repo{}, atoll.Errorf(atoll.EINVALID, "webhook repository lacks owner or name")
	}
	if p.app != nil && inst != nil {
		p.app.remember(repo.FullName(), inst.ID)
	}
	return repo, nil
}
