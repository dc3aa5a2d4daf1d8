package azuredevops

import (
	"context"
	"slices"
	"strconv"
	"strings"

	"github.com/atollhq/atoll"
	"github.com/atollhq/atoll/vcs"
	"github.com/microsoft/azure-devops-go-api/azuredevops/v7/git"
	"github.com/microsoft/azure-devops-go-api/azuredevops/v7/webapi"
)

// Comment ids are "THREADID/COMMENTID": a comment is addressed by its
// thread, and comment ids are only unique within a pull request.
func commentID(thread, comment int) string { return strconv.Itoa(thread) + "/" + strconv.Itoa(comment) }

// parseCommentID splits "THREADID/COMMENTID".
func parseCommentID(id string) (thread, comment int, ok bool) {
	t, c, found := strings.Cut(id, "/")
	thread, err1 := strconv.Atoi(t)
	comment, err2 := strconv.Atoi(c)
	if !found || err1 != nil || err2 != nil || thread <= 0 || comment <= 0 {
		return 0, 0, false
	}
	return thread, comment, true
}

// CreateComment starts a new thread, active (so it counts as a discussion
// to resolve where a policy asks for that), holding body.
func (p *Provider) CreateComment(ctx context.Context, repo atoll.Repo, number int, body string) (string, error) {
	gc, project, name, err := p.repoClient(ctx, repo)
	if err != nil {
		return "", err
	}
	th, err := gc.CreateThread(ctx, git.CreateThreadArgs{Project: &project, RepositoryId: &name, PullRequestId: &number,
		CommentThread: &git.GitPullRequestCommentThread{
			Status:   &git.CommentThreadStatusValues.Active,
			Comments: &[]git.Comment{{Content: ptr(fitComment(body)), CommentType: &git.CommentTypeValues.Text, ParentCommentId: ptr(0)}},
		}})
	if err != nil {
		return "", apiError(err, "create comment on %s#%d", repo.FullName(), number)
	}
	cid := 1
	if th.Comments != nil && len(*th.Comments) > 0 {
		cid = deref((*th.Comments)[0].Id)
	}
	return commentID(deref(th.Id), cid), nil
}

// ReplyComment implements vcs.Replier: body is posted in the thread of
// replyTo ("THREADID/COMMENTID"), as a reply to that comment. A replyTo
// that is not such an id (an event from elsewhere) starts a new thread.
func (p *Provider) ReplyComment(ctx context.Context, repo atoll.Repo, number int, replyTo, body string) (string, error) {
	thread, parent, ok := parseCommentID(replyTo)
	if !ok {
		return p.CreateComment(ctx, repo, number, body)
	}
	gc, project, name, err := p.repoClient(ctx, repo)
	if err != nil {
		return "", err
	}
	c, err := gc.CreateComment(ctx, git.CreateCommentArgs{Project: &project, RepositoryId: &name, PullRequestId: &number, ThreadId: &thread,
		Comment: &git.Comment{Content: ptr(fitComment(body)), CommentType: &git.CommentTypeValues.Text, ParentCommentId: &parent}})
	if err != nil {
		return "", apiError(err, "reply to comment %s on %s#%d", replyTo, repo.FullName(), number)
	}
	return commentID(thread, deref(c.Id)), nil
}

// UpdateComment replaces the body of comment id ("THREADID/COMMENTID").
func (p *Provider) UpdateComment(ctx context.Context, repo atoll.Repo, number int, id, body string) error {
	thread, cid, ok := parseCommentID(id)
	if !ok {
		return atoll.Errorf(atoll.EINVALID, "invalid Azure DevOps comment id %q (want THREADID/COMMENTID)", id)
	}
	gc, project, name, err := p.repoClient(ctx, repo)
	if err != nil {
		return err
	}
	if _, err := gc.UpdateComment(ctx, git.UpdateCommentArgs{Project: &project, RepositoryId: &name, PullRequestId: &number,
		ThreadId: &thread, CommentId: &cid, Comment: &git.Comment{Content: ptr(fitComment(body))}}); err != nil {
		return apiError(err, "update comment %s on %s#%d", id, repo.FullName(), number)
	}
	return nil
}

// HideComments closes the threads in which Atoll posted a comment carrying
// vcs.Marker(command): Azure cannot minimize a comment, and a closed
// thread is collapsed on the pull request's page. Nothing is deleted.
// Threads holding a comment in keep are left open, as are threads already
// resolved some other way. With Config.User set, only comments authored by
// that account count; without it the marker alone does, which another
// user could only abuse to close their own thread.
func (p *Provider) HideComments(ctx context.Context, repo atoll.Repo, number int, command string, keep ...string) error {
	gc, project, name, err := p.repoClient(ctx, repo)
	if err != nil {
		return err
	}
	threads, err := gc.GetThreads(ctx, git.GetThreadsArgs{Project: &project, RepositoryId: &name, PullRequestId: &number})
	if err != nil {
		return apiError(err, "list threads on %s#%d", repo.FullName(), number)
	}
	keepThreads := map[int]bool{}
	for _, k := range keep {
		if t, _, ok := parseCommentID(k); ok {
			keepThreads[t] = true
		}
	}
	marker := vcs.Marker(command)
	for _, th := range deref(threads) {
		id := deref(th.Id)
		if keepThreads[id] || deref(th.IsDeleted) || !openThread(th.Status) || !slices.ContainsFunc(deref(th.Comments), func(c git.Comment) bool {
			return !deref(c.IsDeleted) && strings.Contains(deref(c.Content), marker) && p.ours(c.Author)
		}) {
			continue
		}
		_, err := gc.UpdateThread(ctx, git.UpdateThreadArgs{Project: &project, RepositoryId: &name, PullRequestId: &number, ThreadId: &id,
			CommentThread: &git.GitPullRequestCommentThread{Status: &git.CommentThreadStatusValues.Closed}})
		if err != nil && errorCode(err) == atoll.ENOTFOUND {
			continue // deleted since it was listed
		} else if err != nil {
			return apiError(err, "close thread %d on %s#%d", id, repo.FullName(), number)
		}
	}
	return nil
}

// openThread reports whether a thread is still open: active or pending
// (or with no status, as a plain comment thread can be).
func openThread(s *git.CommentThreadStatus) bool {
	return s == nil || *s == git.CommentThreadStatusValues.Active || *s == git.CommentThreadStatusValues.Pending ||
		*s == git.CommentThreadStatusValues.Unknown || *s == ""
}

// ours reports whether a comment's author is the account Atoll posts as
// (any author when Config.User is unset).
func (p *Provider) ours(author *webapi.IdentityRef) bool {
	if p.cfg.User == "" {
		return true
	}
	return author != nil && (strings.EqualFold(deref(author.UniqueName), p.cfg.User) || strings.EqualFold(deref(author.DisplayName), p.cfg.User))
}

// maxCommentChars is Azure DevOps' limit on a comment's content; a longer
// one is refused, which would lose the whole plan output.
const maxCommentChars = 150000

// MaxCommentChars is Azure DevOps' limit on a comment (vcs.CommentLimiter).
func (p *Provider) MaxCommentChars() int { return maxCommentChars }

var _ vcs.CommentLimiter = (*Provider)(nil)

// fitComment truncates body to the host's limit (see vcs.FitComment).
func fitComment(body string) string { return vcs.FitComment(body, maxCommentChars, "Azure DevOps'") }
