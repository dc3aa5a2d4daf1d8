package runner

import (
	"cmp"
	"context"
	"crypto/sha256"
	"errors"
	"fmt"
	"log/slog"
	"slices"
	"time"
	"unicode/utf8"

	"github.com/atollhq/atoll"
	"github.com/atollhq/atoll/runner/markdown"
	"github.com/atollhq/atoll/vcs"
)

// setStatus sets "atlantis/<command>" (aggregate, label "") or
// "atlantis/<command>: <label>" on sha. A failure to set a status is logged,
// not fatal: the comment still tells the user.
func (rp reporter) setStatus(ctx context.Context, p vcs.Provider, repo *atoll.Repo, sha, command, label string, st vcs.Status) {
	ctx, cancel := reportContext(ctx)
	defer cancel()
	if sha == "" || command == atoll.JobImport || command == atoll.JobStateRm {
		// Atlantis sets no commit status for import and state rm.
		return
	}
	name := cmp.Or(rp.statusName, DefaultStatusName) + "/" + command
	if label != "" {
		name += ": " + label
	}
	st.Context = truncateContext(name)
	if err := p.SetStatus(ctx, *repo, sha, st); err != nil {
		rp.logger.Log(ctx, errorLevel(err), "set commit status", "repo", repo.FullName(), "context", name, "err", err)
	}
}

// maxStatusContext is the longest context a host keeps (GitHub: 255).
const maxStatusContext = 255

// truncateContext shortens a context longer than maxStatusContext, as
// Atlantis does, ending it with a hash of the whole so that two long
// contexts with the same beginning stay apart.
func truncateContext(s string) string {
	if utf8.RuneCountInString(s) <= maxStatusContext {
		return s
	}
	sum := sha256.Sum256([]byte(s))
	suffix := fmt.Sprintf("-%x", sum[:4])
	return string([]rune(s)[:maxStatusContext-len(suffix)]) + suffix
}

// status sets a commit status of the request's pull request without
// holding up its work: statuses go out in order from the request's status
// queue (on a real host each is a round trip, and nothing waits on them).
func (rp reporter) status(ctx context.Context, w *work, sha, command, label, state, desc, url string) {
	rp.statusWith(ctx, w, sha, command, label, vcs.Status{State: state, Description: desc, TargetURL: url})
}

// statusWith is status with every field of the status given (Details).
func (rp reporter) statusWith(ctx context.Context, w *work, sha, command, label string, st vcs.Status) {
	ctx = context.WithoutCancel(ctx)
	st.Pull = w.pull.Number
	w.statuses.push(func() { rp.setStatus(ctx, w.vcs, w.repo, sha, command, label, st) })
}

// statusQueue runs a request's status updates one at a time, in order.
type statusQueue struct {
	ch   chan func()
	done chan struct{}
}

func newStatusQueue() *statusQueue {
	q := &statusQueue{ch: make(chan func(), 64), done: make(chan struct{})}
	go func() {
		defer close(q.done)
		for f := range q.ch {
			f()
		}
	}()
	return q
}

func (q *statusQueue) push(f func()) { q.ch <- f }

// drain waits until every queued status was sent; the queue is then closed.
func (q *statusQueue) drain() {
	close(q.ch)
	<-q.done
}

// report tells the pull request how a plan or apply request's jobs ended:
// one comment (more when it is too long) with every outcome not told
// before, and the aggregate status. Each outcome is told once: a request
// resumed after a stop, or a job already reported as interrupted at start,
// is not told again. Earlier comments for the command are hidden only by a
// request's first report. The aggregate status is, for a plan, of this
// request's projects; for an apply, of the whole pull request.
func (r *Runner) report(ctx context.Context, w *work, command, sha string, outcomes []outcome) error {
	ctx, cancel := reportContext(ctx)
	defer cancel()
	ok, final := 0, true
	var tell []atoll.ProjectResult
	var told []int64
	fresh := true
	for _, o := range outcomes {
		final = final && o.final
		if o.final && o.res.Error == "" && o.res.LockedBy == nil {
			ok++
		}
		switch {
		case o.job.Reported:
			fresh = false
		case o.final:
			told = append(told, o.job.ID)
			if !silenced(o.job, command) {
				tell = append(tell, o.res)
			}
		}
	}
	switch {
	case !final:
		// Stopping: the resumed request sets it once every job has ended.
	case command == "apply":
		// Of the whole pull request, not this request (see setApplyStatus).
		r.setApplyStatus(ctx, w, sha, true)
	default:
		state := vcs.StatusSuccess
		if ok < len(outcomes) {
			state = vcs.StatusFailure
		}
		r.reporter().status(ctx, w, sha, command, "", state, fmt.Sprintf("%d/%d projects planned successfully.", ok, len(outcomes)), r.reporter().pullURL(w))
	}
	for _, o := range outcomes {
		if o.resumed {
			r.reporter().resumedStatus(ctx, w, o)
		}
	}
	if len(tell) == 0 {
		// Every project silenced (silence_pr_comments): told all the same.
		if len(told) > 0 {
			return r.commit("mark jobs reported", func(ctx context.Context) error { return r.DB.MarkJobsReported(ctx, told) })
		}
		return nil
	}
	for _, o := range outcomes {
		if o.notStarted && !silenced(o.job, command) {
			tell = append(tell, o.res)
		}
	}
	posted, err := r.reporter().results(ctx, w, command, tell)
	if err != nil {
		return err
	}
	if err := r.commit("mark jobs reported", func(ctx context.Context) error { return r.DB.MarkJobsReported(ctx, told) }); err != nil {
		return err
	}
	// Hidden after the new results are up, so users do not wait for it.
	if fresh && command == "plan" && r.HidePrevPlanComments {
		r.reporter().hidePrevious(ctx, w, command, posted)
	}
	return nil
}

// markdownFor is the renderer splitting results at the host's comment limit, if
// it has one (and the renderer sets none lower): each comment is filled up to
// it, so long plans take as few comments as the host allows.
func (rp reporter) markdownFor(host vcs.Provider) markdown.Renderer {
	md := rp.md
	if l, ok := vcs.As[vcs.CommentLimiter](host); ok && (md.MaxCommentLen <= 0 || l.MaxCommentChars() < md.MaxCommentLen) {
		md.MaxCommentLen = l.MaxCommentChars()
	}
	return md
}

// resumedStatus sets the commit status of a job that ended before this run
// of its request, as runJob would have when it ended: the process that ran
// it may have died (or lost its lease, and been fenced) with the status
// still queued.
func (rp reporter) resumedStatus(ctx context.Context, w *work, o outcome) {
	j := o.job
	st, desc := vcs.StatusSuccess, title(j.Kind)+" succeeded."
	if j.State != atoll.JobSucceeded {
		st, desc = vcs.StatusFailure, title(j.Kind)+" "+j.State+"."
	} else if j.Summary != nil {
		desc = summaryText(j.Kind, *j.Summary)
	}
	rp.jobStatus(ctx, w, j, st, desc, o.res)
}

func (rp reporter) pullURL(w *work) string {
	if rp.publicURL == "" {
		return ""
	}
	return rp.links().Pull(w.repo.FullName(), w.pull.Number)
}

// lockURL is where a plan's lock can be deleted: the project's row on the
// pull request page (atoll.Links.Project), which has the
// Unlock button; "" for other jobs or without a public URL.
func (rp reporter) lockURL(w *work, j *atoll.Job) string {
	if j.Kind != atoll.JobPlan || rp.publicURL == "" {
		return ""
	}
	return rp.links().Project(w.repo.FullName(), w.pull.Number, j.ProjectID)
}

// reportContext outlives a stop: when running jobs are interrupted, telling
// the pull request so is exactly what must still happen.
func reportContext(ctx context.Context) (context.Context, context.CancelFunc) {
	return context.WithTimeout(context.WithoutCancel(ctx), 30*time.Second)
}

// silenced reports whether the project's silence_pr_comments leaves its
// result of command (plan or apply) out of the comment, as in Atlantis;
// the statuses and the dashboard still show it.
func silenced(j *atoll.Job, command string) bool {
	return slices.Contains(j.Spec.SilencePRComments, command)
}

// errorLevel is the level a failed outward write is logged at: a write
// refused because this node's lease passed is logged once, by the fence,
// and is only a debug line here.
func errorLevel(err error) slog.Level {
	if errors.Is(err, atoll.ErrFenced) {
		return slog.LevelDebug
	}
	return slog.LevelError
}

// jobStatus sets the commit status of job j's project: state and desc, a
// link to its log and, on hosts that show them, res rendered as details.
func (rp reporter) jobStatus(ctx context.Context, w *work, j *atoll.Job, state, desc string, res atoll.ProjectResult) {
	res.Command = j.Kind
	rp.statusWith(ctx, w, j.HeadSHA, j.Kind, projectLabel(j.Dir, j.Workspace, j.Project),
		vcs.Status{State: state, Description: desc, TargetURL: rp.jobURL(j.ID), Details: markdown.StatusDetails(res)})
}

func (rp reporter) jobURL(id int64) string {
	if rp.publicURL == "" {
		return ""
	}
	return rp.links().Job(id)
}

func (rp reporter) planURL(id int64) string {
	return rp.links().Plan(id)
}

// links builds the addresses of Atoll's pages the reporter prints.
func (rp reporter) links() atoll.Links { return atoll.Links{Base: rp.publicURL} }

// reply posts one comment for a command that runs nothing.
func (rp reporter) reply(ctx context.Context, w *work, command, body string) error {
	ctx, cancel := reportContext(ctx)
	defer cancel()
	_, err := w.comment(ctx, body+"\n"+vcs.Marker(command))
	return err
}

// results posts the comments telling results of command, split where the
// host's limit says, and returns the host's ids of the comments.
func (rp reporter) results(ctx context.Context, w *work, command string, results []atoll.ProjectResult) ([]string, error) {
	var posted []string
	for _, body := range rp.markdownFor(w.vcs).Results(command, results, vcs.Marker(command)) {
		id, err := w.comment(ctx, body)
		if err != nil {
			return posted, fmt.Errorf("comment %s results: %w", command, err)
		}
		posted = append(posted, id)
	}
	return posted, nil
}
