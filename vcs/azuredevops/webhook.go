package azuredevops

import (
	"crypto/sha256"
	"crypto/subtle"
	"encoding/json"
	"net/http"
	"strconv"
	"strings"

	"github.com/atollhq/atoll"
	"github.com/atollhq/atoll/vcs"
)

// Service hook event types Atoll subscribes to.
const (
	hookPullCreated   = "git.pullrequest.created"
	hookPullUpdated   = "git.pullrequest.updated"
	hookPullMerged    = "git.pullrequest.merged"
	hookPullCommented = "ms.vss-code.git-pullrequest-comment-event"
)

// CheckWebhook requires the basic auth credentials configured for the
// service hook subscriptions: Azure DevOps signs nothing, so they are all
// that tells its deliveries from anyone else's.
func (p *Provider) CheckWebhook(h http.Header) error {
	if p.cfg.WebhookUser == "" || p.cfg.WebhookPassword == "" {
		// Without credentials anyone could trigger plans and applies.
		return atoll.Errorf(atoll.EUNAUTHORIZED, "Azure DevOps webhooks are refused: set --azuredevops-webhook-user and --azuredevops-webhook-password, and the same basic auth on the service hooks.")
	}
	user, pass, ok := (&http.Request{Header: h}).BasicAuth()
	// Both are compared, whatever the first gives, and as digests so that
	// neither the time taken nor the lengths tell anything.
	userOK := equalSecret(user, p.cfg.WebhookUser)
	passOK := equalSecret(pass, p.cfg.WebhookPassword)
	if !ok || userOK&passOK != 1 {
		return atoll.Errorf(atoll.EUNAUTHORIZED, "Azure DevOps webhook: wrong or missing basic auth credentials.")
	}
	return nil
}

func equalSecret(got, want string) int {
	g, w := sha256.Sum256([]byte(got)), sha256.Sum256([]byte(want))
	return subtle.ConstantTimeCompare(g[:], w[:])
}

// ParseWebhook authenticates a service hook delivery by its basic auth and
// reduces pull request and comment events to an Event. Other events, the
// Test button's sample, and updates and comments Atoll does not act on give
// (nil, nil), which is answered 200: see hook_ignore.go for the rule.
func (p *Provider) ParseWebhook(r *http.Request, body []byte) (*vcs.Event, error) {
	if err := p.CheckWebhook(r.Header); err != nil {
		return nil, err
	}
	var env hookEnvelope
	if err := json.Unmarshal(body, &env); err != nil {
		return nil, invalid("the body is not a service hook payload (%v)", err)
	}
	if env.EventType == "" {
		return nil, invalid("eventType is missing")
	}
	var (
		ev  *vcs.Event
		err error
	)
	switch env.EventType {
	case hookPullCreated, hookPullUpdated, hookPullMerged, hookPullCommented:
	default:
		// Pushes, builds, work items...: a subscription Atoll does not
		// need (see hook_ignore.go for what is answered how).
		return p.ignore(&env, "an event type Atoll does not act on: only pull request created, updated, merge attempted and commented on are needed")
	}
	// The Test button's sample names a repository on Microsoft's fabrikam
	// organization: before the host check, which it fails on a Server, and
	// before the allowlist, which it fails everywhere.
	if isSample(&env) {
		return p.ignore(&env, "a test notification (the Test button's sample event, about Microsoft's Fabrikam repository): basic auth and URL are right")
	}
	switch env.EventType {
	case hookPullCommented:
		ev, err = p.commentEvent(&env)
	default:
		ev, err = p.pullEvent(&env)
	}
	if ev != nil {
		ev.DeliveryID = env.ID
	}
	return ev, err
}

// invalid is a payload error; the message names the field at fault.
func invalid(format string, args ...any) error {
	return atoll.Errorf(atoll.EINVALID, "Azure DevOps webhook: "+format+".", args...)
}

func (p *Provider) pullEvent(env *hookEnvelope) (*vcs.Event, error) {
	if len(env.Resource) == 0 || string(env.Resource) == "null" {
		return nil, invalid("resource is missing")
	}
	var pr hookPull
	if err := json.Unmarshal(env.Resource, &pr); err != nil {
		return nil, invalid("resource is not a pull request (%v)", err)
	}
	var kind string
	switch env.EventType {
	case hookPullCreated:
		kind = vcs.EventPullOpened
	case hookPullUpdated:
		kind = classifyUpdate(&pr, env.Message.Text)
	case hookPullMerged:
		// Despite its name this is "merge attempted": Azure DevOps sends it
		// whenever it computes the pull request's merge commit (on every
		// push to either branch), with the pull request still active. Only
		// a completed one was merged; git.pullrequest.updated reports that
		// too, and the duplicate is harmless (closing is idempotent).
		if pr.Status == "completed" {
			kind = vcs.EventPullClosed
		}
	}
	if kind == "" {
		if env.EventType == hookPullMerged {
			return p.ignore(env, "merge attempted on a pull request that is not completed (Azure DevOps sends it on every push to either branch)")
		}
		return p.ignore(env, "a pull request update that touches no code (reviewers, votes)")
	}
	repo, pull, err := p.pullFromPayload(env, &pr, kind != vcs.EventPullClosed)
	if err != nil {
		return nil, err
	}
	return &vcs.Event{
		Kind:   kind,
		Repo:   repo,
		Pull:   pull,
		Merged: kind == vcs.EventPullClosed && pull.State == atoll.PullMerged,
		Draft:  pr.IsDraft,
		// The payload names the pull request's author, not who acted.
		User: pull.Author,
	}, nil
}

// Azure DevOps sends one event type, git.pullrequest.updated, for every
// change to a pull request: new commits, a title, reviewers, votes,
// publishing a draft, completing or abandoning it. The resource is the
// pull request after the change and says nothing of what changed; only the
// message does ("Jamal Hartnett updated the source branch of pull request 2
// (title) in repo"), in the organization's language.
//
// Atlantis (v0.47) skips updates whose message names a reviewer or vote
// change and treats every other open update as new commits (it plans
// again). Atoll does the same, but reads the message more closely: the
// status decides closing (language-independent), the title (which users
// write) is cut out of the message before it is matched, a reactivated
// pull request is reopened and a published draft is "ready". An update it
// cannot read is treated as new commits, as in Atlantis: planning again for
// nothing costs a plan, while missing a push (as would ignoring every update
// of an organization that does not write English) leaves the pull request
// without plans for its head.
var (
	// ignoredUpdates are the messages of changes that touch no code:
	// Atlantis's list.
	ignoredUpdates = []string{
		"changed the reviewer list",
		"approved pull request",
		"has approved and left suggestions",
		"is waiting for the author",
		"rejected pull request",
		"voted on pull request",
	}
	pushUpdate = "updated the source branch" // verified against real deliveries
)

func classifyUpdate(pr *hookPull, text string) string {
	switch pr.Status {
	case "completed":
		return vcs.EventPullClosed
	case "abandoned":
		return vcs.EventPullClosed
	}
	verb := updateVerb(text, pr.Title)
	for _, s := range ignoredUpdates {
		if strings.Contains(verb, s) {
			return ""
		}
	}
	switch {
	case strings.Contains(verb, pushUpdate):
		return vcs.EventPullSynchronize
	case strings.Contains(verb, "reactivated"):
		return vcs.EventPullReopened
	case strings.Contains(verb, "published") && !pr.IsDraft:
		return vcs.EventPullReady
	}
	return vcs.EventPullSynchronize
}

// updateVerb is the part of an update's message that says what happened:
// its first line, up to the pull request's title, which could otherwise
// make any update read as any other.
func updateVerb(text, title string) string {
	text, _, _ = strings.Cut(text, "\n")
	if title != "" {
		text, _, _ = strings.Cut(text, "("+title+")")
	}
	return text
}

// pullFromPayload reads the repository and pull request of a pull request
// resource. needHead requires the head commit, which closing does not use.
func (p *Provider) pullFromPayload(env *hookEnvelope, pr *hookPull, needHead bool) (atoll.Repo, atoll.Pull, error) {
	if pr.PullRequestID <= 0 {
		return atoll.Repo{}, atoll.Pull{}, invalid("resource.pullRequestId is missing")
	}
	if pr.Repository == nil {
		return atoll.Repo{}, atoll.Pull{}, invalid("resource.repository is missing")
	}
	repo, err := p.repoFromPayload(pr.Repository, env.ResourceContainers.Collection.BaseURL)
	if err != nil {
		return atoll.Repo{}, atoll.Pull{}, err
	}
	if pr.CreatedBy.UniqueName == "" {
		return atoll.Repo{}, atoll.Pull{}, invalid("resource.createdBy.uniqueName is missing")
	}
	var head, base string
	if pr.LastMergeSourceCommit != nil {
		head = pr.LastMergeSourceCommit.CommitID
	}
	if pr.LastMergeTargetCommit != nil {
		base = pr.LastMergeTargetCommit.CommitID
	}
	if needHead {
		switch {
		case head == "":
			return atoll.Repo{}, atoll.Pull{}, invalid("resource.lastMergeSourceCommit.commitId is missing")
		case pr.SourceRefName == "":
			return atoll.Repo{}, atoll.Pull{}, invalid("resource.sourceRefName is missing")
		case pr.TargetRefName == "":
			return atoll.Repo{}, atoll.Pull{}, invalid("resource.targetRefName is missing")
		}
	}
	state := atoll.PullOpen
	switch pr.Status {
	case "completed":
		state = atoll.PullMerged
	case "abandoned":
		state = atoll.PullClosed
	}
	pull := atoll.Pull{
		Repo:    repo.FullName(),
		Number:  pr.PullRequestID,
		Title:   pr.Title,
		Author:  pr.CreatedBy.UniqueName,
		HeadSHA: head,
		HeadRef: strings.TrimPrefix(pr.SourceRefName, "refs/heads/"),
		BaseSHA: base,
		BaseRef: strings.TrimPrefix(pr.TargetRefName, "refs/heads/"),
		State:   state,
		URL:     pullURL(repo, pr.PullRequestID),
	}
	return repo, pull, nil
}

func pullURL(repo atoll.Repo, number int) string {
	return repo.HTMLURL + "/pullrequest/" + strconv.Itoa(number)
}

// repoFromPayload names a repository resource. Its organization comes from
// its URLs (and the event's collection URL): every one present must be on
// the configured host and name the same organization.
func (p *Provider) repoFromPayload(r *hookRepository, collectionURL string) (atoll.Repo, error) {
	if r.Name == "" {
		return atoll.Repo{}, invalid("repository.name is missing")
	}
	if r.Project.Name == "" {
		return atoll.Repo{}, invalid("repository.project.name is missing")
	}
	org := ""
	for _, f := range []struct{ field, url string }{
		{"repository.url", r.URL},
		{"repository.remoteUrl", r.RemoteURL},
		{"repository.webUrl", r.WebURL},
		{"resourceContainers.collection.baseUrl", collectionURL},
	} {
		if f.url == "" {
			continue
		}
		o, _, err := p.splitURL(f.field, f.url)
		if err != nil {
			return atoll.Repo{}, err
		}
		if org != "" && o != org {
			return atoll.Repo{}, invalid("%s names organization %q, not %q", f.field, o, org)
		}
		org = o
	}
	if org == "" {
		return atoll.Repo{}, invalid("repository.url is missing")
	}
	return p.repo(org, r.Project.Name, r.Name)
}

// repo is the Atoll repository ORG/PROJECT/NAME on this host.
func (p *Provider) repo(org, project, name string) (atoll.Repo, error) {
	if strings.Contains(project, "/") || strings.Contains(name, "/") {
		return atoll.Repo{}, invalid("project %q or repository %q has a slash", project, name)
	}
	u := p.orgURL(org) + "/" + pathEscape(project) + "/_git/" + pathEscape(name)
	return atoll.Repo{
		VCS:      atoll.VCSAzureDevOps,
		Host:     p.Host(),
		Owner:    org + "/" + project,
		Name:     name,
		CloneURL: u,
		HTMLURL:  u,
	}, nil
}
