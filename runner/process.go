package runner

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"sync"
	"time"

	"github.com/atollhq/atoll"
	"github.com/atollhq/atoll/command"
	"github.com/atollhq/atoll/git"
	"github.com/atollhq/atoll/vcs"
)

// work is what a request needs while it runs.
type work struct {
	req  *atoll.Request
	repo *atoll.Repo
	pull *atoll.Pull
	vcs  vcs.Provider
	log  *slog.Logger

	// dirs holds the work dirs this request checked out, by workspace and
	// commit. Its jobs share them: a second checkout would clean away the
	// plan files of jobs running beside it, and costs a full tree write.
	mu       sync.Mutex
	dirs     map[string]string
	applied  map[int64]bool // apply jobs that started Terraform (notifications.go)
	releases []func()

	statuses *statusQueue

	// credEnv is Terraform's git credential helper settings while the
	// request's jobs run (see grantCredentials).
	credEnv []string

	tfBins jobBinaries // by job: the Terraform binary it runs (tfversion.go)

	// later are the plans whose JSON is made once the request has told
	// its results (showlater.go).
	later []laterShow

	// last is the pull request as refresh last fetched it (under mu);
	// fetched is one fetch for refreshOnce to use (labels.go).
	last, fetched *vcs.PullDetails
}

// releaseDirs gives the request's checkouts back to the pool.
func (w *work) releaseDirs() {
	w.mu.Lock()
	defer w.mu.Unlock()
	for _, release := range w.releases {
		release()
	}
	w.releases, w.dirs = nil, nil
}

func (r *Runner) process(req *atoll.Request) {
	// A cancel comment may cancel this request's context (a plan only);
	// stopping the server cancels r.sched.jobCtx, and so this one too.
	ctx, cancel := context.WithCancelCause(r.sched.jobCtx)
	defer cancel(nil)
	r.sched.running.add(req.PullID, req.ID, cancel)
	defer r.sched.running.remove(req.PullID, req.ID)
	log := r.Logger.With("request", req.ID, "kind", req.Kind, "repo", req.Repo, "pull", req.Pull)
	started := time.Now()
	w, err := r.load(ctx, req, log)
	if err == nil {
		r.requests.Store(req.ID, w)
		defer r.requests.Delete(req.ID)
		log.Info("request started")
		err = r.dispatch(ctx, w)
		r.storeLaterShows(ctx, w)
		w.releaseDirs()
		// A pull request's next request starts only after this one's
		// statuses, so they never land out of order.
		w.statuses.drain()
	}
	state, msg := atoll.RequestDone, ""
	if err != nil {
		msg = atoll.ErrorMessage(err)
		log.Log(ctx, errorLevel(err), "request failed", "err", err)
	}
	if cancelID, ok := canceledCause(ctx); ok && r.sched.jobCtx.Err() == nil {
		// Its jobs that did not start never will.
		state, msg = atoll.RequestDone, cancelMark(cancelID)
		if cerr := r.commit("cancel request jobs", func(ctx context.Context) error { return r.DB.CancelRequestJobs(ctx, req.ID, msg) }); cerr != nil {
			log.Error("cancel request jobs", "err", cerr)
		}
	} else if r.sched.jobCtx.Err() != nil {
		// Stopping: jobs that did not start stay queued and the request
		// goes back to the queue; the next start runs what is left.
		state, msg = atoll.RequestQueued, ""
	}
	// A request left running would hold up its pull request's queue.
	ferr := r.commit("finish request", func(ctx context.Context) error { return r.DB.FinishRequest(ctx, req.ID, state, msg) })
	r.sched.release(req.ID, ferr != nil)
	if ferr != nil {
		log.Error("finish request", "err", ferr)
	}
	log.Info("request finished", "state", state)
	if state == atoll.RequestDone {
		r.recordRequest(context.WithoutCancel(ctx), req, err, time.Since(started))
	}
}

func (r *Runner) load(ctx context.Context, req *atoll.Request, log *slog.Logger) (*work, error) {
	pull, err := r.DB.Pull(ctx, req.PullID)
	if err != nil {
		return nil, err
	}
	repo, err := r.DB.Repo(ctx, pull.RepoID)
	if err != nil {
		return nil, err
	}
	p, err := r.provider(repo.VCS)
	if err != nil {
		return nil, err
	}
	if pull.State == atoll.PullDrift {
		p = silent{p}
	}
	return &work{req: req, repo: repo, pull: pull, vcs: p, log: log, statuses: newStatusQueue()}, nil
}

func (r *Runner) dispatch(ctx context.Context, w *work) error {
	switch w.req.Kind {
	case atoll.RequestClose:
		return r.close(ctx, w)
	case atoll.RequestDrift:
		return r.driftRun(ctx, w)
	case atoll.RequestAutoplan:
		if w.pull.State != atoll.PullOpen {
			return nil
		}
		if ok, err := r.teamAllowed(ctx, w, command.Plan); !ok {
			return err
		}
		if r.autoplanLabeled(ctx, w) {
			return nil
		}
		r.sched.running.markPlan(w.pull.ID, w.req.ID)
		autoplan := &command.Command{Name: command.Plan}
		return r.withHooks(ctx, w, "plan", autoplan, func() error { return r.plan(ctx, w, autoplan, true) })
	}
	r.reporter().react(ctx, w)
	cmd, err := r.Parser.Parse(w.req.Comment)
	if err != nil {
		return r.reporter().reply(ctx, w, "error", atoll.ErrorMessage(err))
	} else if cmd == nil {
		return nil
	}
	if w.pull.State != atoll.PullOpen && (cmd.Name == command.Plan || cmd.Name == command.Apply) {
		return r.reporter().reply(ctx, w, "error", fmt.Sprintf("This pull request is %s: Atoll does not %s closed pull requests.", w.pull.State, cmd.Name))
	}
	if ok, err := r.teamAllowed(ctx, w, cmd.Name); !ok {
		return err
	}
	switch cmd.Name {
	case command.Help:
		return r.reporter().reply(ctx, w, "help", r.Parser.HelpReply(cmd))
	case command.Version:
		return r.version(ctx, w, cmd)
	case command.Unlock:
		return r.unlock(ctx, w)
	case command.Plan:
		r.sched.running.markPlan(w.pull.ID, w.req.ID)
		return r.withHooks(ctx, w, "plan", cmd, func() error { return r.plan(ctx, w, cmd, false) })
	case command.Apply:
		return r.withHooks(ctx, w, "apply", cmd, func() error { return r.apply(ctx, w, cmd) })
	case command.Cancel:
		return r.cancel(ctx, w)
	case command.Import, command.State:
		return r.withHooks(ctx, w, cmd.Name, cmd, func() error { return r.importRm(ctx, w, cmd) })
	case command.ApprovePolicies:
		return r.approvePolicies(ctx, w, cmd)
	}
	return r.reporter().reply(ctx, w, "error", notYet(r.Parser, cmd))
}

// comment posts body on the request's pull request: in the thread of the
// comment that asked for it, on hosts that thread their comments.
func (w *work) comment(ctx context.Context, body string) (string, error) {
	return vcs.Comment(ctx, w.vcs, *w.repo, w.pull.Number, w.replyTo(), body)
}

// replyTo is the host's id of the comment the request answers, or "". Only
// a comment that came from the host's webhook has one: a request from the
// dashboard or the API carries the id of a comment in Atoll's database (a
// local repository's), which the host does not know, and autoplan, close
// and the like answer no comment.
func (w *work) replyTo() string {
	if w.req.Kind != atoll.RequestComment || w.req.Source != atoll.SourcePRComment {
		return ""
	}
	return w.req.CommentID
}

func (r *Runner) unlock(ctx context.Context, w *work) error {
	if msg := r.unlockRefused(ctx, w); msg != "" {
		return r.reporter().reply(ctx, w, "unlock", msg)
	}
	// Plans made without a lock (on_apply, disabled) are discarded too:
	// counted to say so.
	pending, err := r.DB.PendingPlans(ctx, w.pull.ID)
	if err != nil {
		return err
	}
	locks, err := r.DB.ReleaseLocksWhere(ctx, atoll.LockSelector{PullID: w.pull.ID}, w.req.User, w.req.Source, "locks.unlock", "unlocked by comment")
	if err != nil {
		return err
	}
	n := len(locks)
	if n == 0 && len(pending) > 0 {
		return r.reporter().reply(ctx, w, "unlock", r.Markdown.DiscardedPlans(len(pending), ""))
	}
	return r.reporter().reply(ctx, w, "unlock", r.Markdown.Unlocked(n, ""))
}

// close tells the pull request which locks were released (that happened in
// the webhook's transaction).
func (r *Runner) close(ctx context.Context, w *work) error {
	projects, err := r.DB.PullProjects(ctx, w.pull.ID)
	if err != nil {
		return err
	}
	if len(projects) == 0 {
		return nil
	}
	labels := make([]string, len(projects))
	for i, p := range projects {
		labels[i] = p.Label()
	}
	return r.reporter().reply(ctx, w, "close", r.Markdown.Closed(labels, ""))
}

// reportInterrupted tells a pull request that a job stopped with the process.
func (r *Runner) reportInterrupted(ctx context.Context, j *atoll.Job) {
	pull, err := r.DB.Pull(ctx, j.PullID)
	if err != nil || pull.State == atoll.PullDrift {
		return // a drift target is no pull request: nothing to tell
	}
	repo, err := r.DB.Repo(ctx, pull.RepoID)
	if err != nil {
		return
	}
	p, err := r.provider(repo.VCS)
	if err != nil {
		return
	}
	rp := r.reporter()
	if err := rp.interrupted(ctx, p, repo, pull.Number, j); err != nil {
		r.Logger.Log(ctx, errorLevel(err), "report interrupted job", "job", j.ID, "err", err)
	} else if err := r.commit("mark job reported", func(ctx context.Context) error { return r.DB.MarkJobsReported(ctx, []int64{j.ID}) }); err != nil {
		r.Logger.Error("report interrupted job", "job", j.ID, "err", err)
	}
	rp.setStatus(ctx, p, repo, j.HeadSHA, j.Kind, projectLabel(j.Dir, j.Workspace, j.Project),
		vcs.Status{State: vcs.StatusError, Description: "interrupted", TargetURL: rp.jobURL(j.ID), Pull: j.Pull})
}

// checkout brings the pull request's work dir for workspace to sha.
func (r *Runner) checkout(ctx context.Context, w *work, workspace, sha string) (string, error) {
	w.mu.Lock()
	defer w.mu.Unlock()
	key := workspace + "@" + sha
	if dir, ok := w.dirs[key]; ok {
		return dir, nil
	}
	remote, err := cloneRemote(ctx, w)
	if err != nil {
		return "", err
	}
	spec := git.Spec{Key: workdirKey(w.repo), Remote: remote, Pull: w.pull.Number, Workspace: workspace,
		HeadSHA: sha, HeadRef: w.pull.HeadRef, BaseRef: w.pull.BaseRef, ExtraRefs: w.vcs.PullRefs(w.pull.Number)}
	start := time.Now()
	dir, release, err := r.Workdirs.Checkout(ctx, spec)
	w.log.Debug("checkout", "workspace", workspace, "sha", short(sha), "ms", time.Since(start).Milliseconds())
	if err == nil {
		if w.dirs == nil {
			w.dirs = map[string]string{}
		}
		w.dirs[key] = dir
		w.releases = append(w.releases, release)
	}
	if err != nil {
		// git's message may name paths; keep it for the log, say less to users.
		w.log.Error("checkout", "err", err)
		var ae *atoll.Error
		if errors.As(err, &ae) {
			return "", err
		}
		return "", atoll.Errorf(atoll.EINTERNAL, "Checking out %s at %s failed: %s", w.repo.FullName(), short(sha), redactPaths(err.Error(), r.Workdirs.Root))
	}
	return dir, nil
}

// cloneRemote is where and how git fetches the pull request's repository:
// with the host's own Authorization header where it has one
// (vcs.CloneAuthorizer), else with the credentials of its clone URL.
func cloneRemote(ctx context.Context, w *work) (git.Remote, error) {
	if ca, ok := vcs.As[vcs.CloneAuthorizer](w.vcs); ok {
		rawURL, auth, err := ca.CloneAuthorization(ctx, *w.repo)
		if err != nil {
			return git.Remote{}, err
		}
		return git.NewRemoteAuthorization(rawURL, auth)
	}
	cloneURL, err := w.vcs.CloneURL(ctx, *w.repo)
	if err != nil {
		return git.Remote{}, err
	}
	return git.NewRemote(cloneURL)
}

func workdirKey(repo *atoll.Repo) string {
	return repo.VCS + "/" + repo.Host + "/" + repo.Owner + "/" + repo.Name
}
