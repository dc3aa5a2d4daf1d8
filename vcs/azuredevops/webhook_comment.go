package azuredevops

import (
	"encoding/json"
	"regexp"
	"strconv"
	"strings"
	"time"

	"github.com/atollhq/atoll"
	"github.com/atollhq/atoll/vcs"
)

// commentPath is where a comment's self link ends:
// .../pullRequests/N/threads/T/comments/C.
var commentPath = regexp.MustCompile(`/pullRequests/(\d+)/threads/(\d+)/comments/(\d+)/?$`)

// pullLink finds a pull request's web link in a message:
// .../_git/REPO/pullrequest/N.
var pullLink = regexp.MustCompile(`https?://[^\s"'<>()\[\]]+/_git/[^\s"'<>()\[\]/?#]+/pullrequest/\d+`)

// commentEvent reads a "pull request commented on" event. Resource version
// 2.0 carries the comment and its pull request; 1.0 carries the comment
// alone, whose links say which pull request and thread it is in.
func (p *Provider) commentEvent(env *hookEnvelope) (*vcs.Event, error) {
	if len(env.Resource) == 0 || string(env.Resource) == "null" {
		return nil, invalid("resource is missing")
	}
	var (
		c  *hookComment
		pr *hookPull
	)
	// Versions are "2.0", possibly with a -preview suffix.
	switch major, _, _ := strings.Cut(env.ResourceVersion, "."); major {
	case "2":
		var res hookCommentV2
		if err := json.Unmarshal(env.Resource, &res); err != nil {
			return nil, invalid("resource is not a comment and pull request (%v)", err)
		}
		if res.Comment == nil {
			return nil, invalid("resource.comment is missing")
		}
		// pullRequest is required only of a comment Atoll acts on (below):
		// Azure DevOps may leave it out of a deletion's event.
		c, pr = res.Comment, res.PullRequest
	case "1":
		c = new(hookComment)
		if err := json.Unmarshal(env.Resource, c); err != nil {
			return nil, invalid("resource is not a comment (%v)", err)
		}
	default:
		return nil, invalid("resourceVersion %q of %s is not supported (subscribe with 2.0)", env.ResourceVersion, env.EventType)
	}
	// Only new comments are commands: not Azure's own notes ("X voted"),
	// not deletions, and not edits: a command must not run again because
	// someone fixed a typo in it (GitHub's edits are ignored too).
	// These are read first, before anything is required of the rest of
	// the resource: whatever else a deletion's event lacks, it is answered
	// 2xx rather than put the subscription on probation.
	switch {
	case c.IsDeleted:
		return p.ignore(env, "a comment was deleted")
	case c.CommentType == "system":
		return p.ignore(env, "a comment Azure DevOps wrote itself (votes, pushes, status changes)")
	case strings.TrimSpace(c.Content) == "":
		return p.ignore(env, "a comment without text")
	}
	edited, err := commentEdited(c)
	if err != nil {
		return nil, err
	}
	if edited {
		return p.ignore(env, "a comment was edited: a command runs when it is posted, not again when it is corrected")
	}
	if major, _, _ := strings.Cut(env.ResourceVersion, "."); major == "2" && pr == nil {
		return nil, invalid("resource.pullRequest is missing")
	}
	if c.Author.UniqueName == "" {
		return nil, invalid("comment.author.uniqueName is missing")
	}
	m := commentPath.FindStringSubmatch(c.Links.Self.Href)
	if m == nil {
		return nil, invalid("comment._links.self.href does not end in pullRequests/N/threads/T/comments/C")
	}
	number, _ := strconv.Atoi(m[1])
	commentID := m[2] + "/" + m[3]

	var (
		repo atoll.Repo
		pull atoll.Pull
	)
	if pr != nil {
		if pr.PullRequestID != number {
			return nil, invalid("resource.pullRequest.pullRequestId %d is not the comment's pull request %d", pr.PullRequestID, number)
		}
		if repo, pull, err = p.pullFromPayload(env, pr, false); err != nil {
			return nil, err
		}
		// The rest of the pull request may be stale by the time the
		// command runs: the runner fetches it.
		pull = atoll.Pull{Repo: pull.Repo, Number: pull.Number, Title: pull.Title, Author: pull.Author, URL: pull.URL}
	} else {
		if repo, err = p.repoFromMessage(env, c, number); err != nil {
			return nil, err
		}
		pull = atoll.Pull{Repo: repo.FullName(), Number: number, URL: pullURL(repo, number)}
	}
	return &vcs.Event{
		Kind:      vcs.EventComment,
		Repo:      repo,
		Pull:      pull,
		User:      c.Author.UniqueName,
		Comment:   c.Content,
		CommentID: commentID,
	}, nil
}

// editSlack is how much later than its publication a comment's content may
// be stamped and still count as new: the two dates of a new comment are
// written by the server, possibly a moment apart; no one edits that fast.
const editSlack = 2 * time.Second

func commentEdited(c *hookComment) (bool, error) {
	if c.LastContentUpdatedDate == "" {
		return false, nil
	}
	published, err := parseHookTime(c.PublishedDate)
	if err != nil {
		return false, invalid("comment.publishedDate %q is not a date", c.PublishedDate)
	}
	updated, err := parseHookTime(c.LastContentUpdatedDate)
	if err != nil {
		return false, invalid("comment.lastContentUpdatedDate %q is not a date", c.LastContentUpdatedDate)
	}
	return updated.Sub(published) > editSlack, nil
}

// parseHookTime reads Azure DevOps' dates, which sometimes lack a zone
// (they are UTC).
func parseHookTime(s string) (time.Time, error) {
	if t, err := time.Parse(time.RFC3339Nano, s); err == nil {
		return t, nil
	}
	return time.Parse("2006-01-02T15:04:05.999999999", s)
}

// repoFromMessage names the repository of a version 1.0 comment event,
// whose resource has only the repository's id. The message links to the
// pull request as ORGURL/PROJECT/_git/REPO/pullrequest/N; the link is a
// URL Azure DevOps builds, not translated text. Without PROJECT (the old
// ORG.visualstudio.com/DefaultCollection/_git/REPO form) the repository is
// its project's namesake, which is what that short form addresses.
func (p *Provider) repoFromMessage(env *hookEnvelope, c *hookComment, number int) (atoll.Repo, error) {
	selfOrg, _, err := p.splitURL("comment._links.self.href", c.Links.Self.Href)
	if err != nil {
		return atoll.Repo{}, err
	}
	for _, text := range []string{env.Message.Markdown, env.Message.HTML, env.Message.Text} {
		for _, link := range pullLink.FindAllString(text, -1) {
			org, rest, err := p.splitURL("message link", link)
			if err != nil {
				return atoll.Repo{}, err
			}
			var project string
			switch {
			case len(rest) == 5 && rest[1] == "_git":
				project, rest = rest[0], rest[1:]
			case len(rest) == 4 && rest[0] == "_git":
				project = rest[1]
			default:
				continue
			}
			if n, _ := strconv.Atoi(rest[3]); n != number || !strings.EqualFold(rest[2], "pullrequest") {
				continue
			}
			if org != selfOrg {
				return atoll.Repo{}, invalid("the message links to organization %q, the comment is in %q", org, selfOrg)
			}
			return p.repo(org, project, rest[1])
		}
	}
	return atoll.Repo{}, invalid("a resource version 1.0 comment event does not name its repository (its message has no link to pull request %d): subscribe with resource version 2.0", number)
}
