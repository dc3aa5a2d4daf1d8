package runner

import (
	"context"
	"fmt"
	"log/slog"
	"slices"
	"strconv"
	"time"

	"github.com/atollhq/atoll"
	"github.com/atollhq/atoll/command"
	"github.com/atollhq/atoll/vcs"
)

// The runner is the server's atoll.CommandService and atoll.UnlockReporter:
// the HTTP layer hands it what users and hosts ask for and never writes a
// comment itself.
var (
	_ atoll.CommandService = (*Runner)(nil)
	_ atoll.UnlockReporter = (*Runner)(nil)
	_ atoll.LogStream      = (*Hub)(nil)
	_ atoll.ApprovalPolicy = (*ApprovalPolicy)(nil)
)

// Receive queues what a webhook asks for (see Enqueue).
func (r *Runner) Receive(ctx context.Context, ev *atoll.VCSEvent) (int64, error) {
	return r.Enqueue(ctx, ev)
}

// Submit writes s.Command as the comment its user would have typed, with
// the server's executable name, and queues it as that comment: the reply,
// the audit log and the request all show the one text Format wrote.
func (r *Runner) Submit(ctx context.Context, s atoll.CommandSubmission) (atoll.Submitted, error) {
	comment, err := r.commandComment(s.Command)
	if err != nil {
		return atoll.Submitted{}, err
	}
	out := atoll.Submitted{Comment: comment}
	ev := &vcs.Event{Kind: vcs.EventComment, Repo: s.Repo, Pull: atoll.Pull{Number: s.Pull.Number}, User: s.User, Comment: comment, Source: s.Source}
	if s.Via == atoll.ViaDashboard && s.Repo.VCS == atoll.VCSLocal {
		// A local repository's conversation is the pull request page: the
		// button's command shows there as its user's comment.
		if out.CommentID, err = r.DB.AddComment(ctx, s.Pull.ID, s.User, comment); err != nil {
			return out, fmt.Errorf("add %q to the conversation: %w", comment, err)
		}
		ev.CommentID = strconv.FormatInt(out.CommentID, 10)
	}
	if out.RequestID, err = r.Enqueue(ctx, ev); err != nil {
		return out, fmt.Errorf("queue %q: %w", comment, err)
	}
	return out, nil
}

// Check is Submit's test of cmd, queuing nothing.
func (r *Runner) Check(cmd atoll.Command) error {
	_, err := r.commandComment(cmd)
	return err
}

// commandComment writes cmd as a comment and reads it back with the
// server's parser, so that a command built by the dashboard or the API is
// held to exactly the rules of a typed one (allowed commands, flag values,
// --disable-apply-all). Format quotes every value, so the only difference
// allowed is the grammar's cleaning of Dir.
func (r *Runner) commandComment(cmd atoll.Command) (string, error) {
	comment := command.Format(cmd, r.Parser.ExecutableName)
	got, err := r.Parser.Parse(comment)
	if err != nil {
		return "", err
	}
	if got == nil || !sameCommand(*got, cmd) {
		return "", atoll.Errorf(atoll.EINVALID, "The command does not read back as itself from its comment %q.", comment)
	}
	return comment, nil
}

// sameCommand compares a parsed command with the one it was written from:
// Dir is cleaned by the parser and ProjectRegexp is compiled by it.
func sameCommand(got, want atoll.Command) bool {
	return got.Name == want.Name && got.SubName == want.SubName && slices.Equal(got.Args, want.Args) &&
		(got.Dir == "") == (want.Dir == "") && got.Workspace == want.Workspace && got.Project == want.Project &&
		got.Verbose == want.Verbose && slices.Equal(got.ExtraArgs, want.ExtraArgs) &&
		got.AutoMergeDisabled == want.AutoMergeDisabled && got.AutoMergeMethod == want.AutoMergeMethod &&
		got.PolicySet == want.PolicySet && got.ClearPolicyApproval == want.ClearPolicyApproval
}

// Comment queues c's body as its user's comment on the pull request, as
// the host would deliver it; on a local repository it is added to the
// conversation first.
func (r *Runner) Comment(ctx context.Context, c atoll.CommentSubmission) (atoll.Submitted, error) {
	out := atoll.Submitted{Comment: c.Body}
	ev := &vcs.Event{Kind: vcs.EventComment, Repo: c.Repo, Pull: atoll.Pull{Number: c.Pull.Number}, User: c.User, Comment: c.Body, Source: c.Source}
	if c.Repo.VCS == atoll.VCSLocal {
		var err error
		if out.CommentID, err = r.DB.AddComment(ctx, c.Pull.ID, c.User, c.Body); err != nil {
			return out, fmt.Errorf("add the comment to the conversation: %w", err)
		}
		ev.CommentID = strconv.FormatInt(out.CommentID, 10)
	}
	id, err := r.Enqueue(ctx, ev)
	if err != nil {
		return out, fmt.Errorf("queue the comment: %w", err)
	}
	out.RequestID = id
	return out, nil
}

// ReportUnlocked comments on each pull request whose locks were released,
// saying who did it, from where (via: "the dashboard", "the API"), and
// which projects. It returns the pull requests it could not tell
// (repo#number), whose errors it logs; the unlock stands anyway.
func (r *Runner) ReportUnlocked(ctx context.Context, locks []*atoll.Lock, user, via string) (failed []string) {
	// The comment is part of the answer, not of the request: a browser that
	// goes away must not cancel it.
	ctx, cancel := context.WithTimeout(context.WithoutCancel(ctx), 30*time.Second)
	defer cancel()
	var order []int64
	byPull := map[int64][]*atoll.Lock{}
	for _, l := range locks {
		if byPull[l.PullID] == nil {
			order = append(order, l.PullID)
		}
		byPull[l.PullID] = append(byPull[l.PullID], l)
	}
	for _, pullID := range order {
		ls := byPull[pullID]
		labels := make([]string, len(ls))
		for i, l := range ls {
			labels[i] = atoll.Project{Name: l.Project, Dir: l.Dir, Workspace: l.Workspace}.Label()
		}
		if err := r.commentOnPullID(ctx, pullID, r.Markdown.UnlockedBy(user, via, labels, "")+"\n"+vcs.Marker("unlock")); err != nil {
			r.serviceLogger().Error("tell pull request of unlock", "repo", ls[0].Repo, "pull", ls[0].Pull, "err", err)
			failed = append(failed, fmt.Sprintf("%s#%d", ls[0].Repo, ls[0].Pull))
		}
	}
	return failed
}

func (r *Runner) commentOnPullID(ctx context.Context, pullID int64, body string) error {
	pull, err := r.DB.Pull(ctx, pullID)
	if err != nil {
		return fmt.Errorf("pull request %d: %w", pullID, err)
	}
	if pull.State == atoll.PullDrift {
		return nil // a drift target is no pull request: nothing to tell
	}
	repo, err := r.DB.Repo(ctx, pull.RepoID)
	if err != nil {
		return fmt.Errorf("repository of pull request %d: %w", pullID, err)
	}
	p, err := r.provider(repo.VCS)
	if err != nil {
		return err
	}
	_, err = p.CreateComment(ctx, *repo, pull.Number, body)
	return err
}

// logger is Logger, or the default one for a runner that was not started
// (the web tests' and a standby's).
func (r *Runner) serviceLogger() *slog.Logger {
	if r.Logger == nil {
		return slog.Default()
	}
	return r.Logger
}
