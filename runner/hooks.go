package runner

import (
	"cmp"
	"context"
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"strings"

	"github.com/atollhq/atoll"
	"github.com/atollhq/atoll/command"
	"github.com/atollhq/atoll/repocfg"
	"github.com/atollhq/atoll/vcs"
)

// hookOutputTail bounds the output a failed hook's comment quotes.
const hookOutputTail = 3000

// withHooks runs a plan, apply, import or state rm request between the server-side repo
// config's pre and post workflow hooks, as Atlantis does: pre hooks in the
// checkout of the head commit before the projects are read (so a hook may
// write atlantis.yaml, as terragrunt-atlantis-config does), post hooks
// after the results are reported. Pre hooks run once per request: a
// request resumed after a restart, whose jobs exist, does not run them
// again. A failing hook is told in a comment and does not stop the
// command (Atlantis's default) unless FailOnPreWorkflowHookError says so.
func (r *Runner) withHooks(ctx context.Context, w *work, name string, cmd *command.Command, run func() error) error {
	if r.ServerConfig == nil {
		return run()
	}
	pre, post := r.ServerConfig.Hooks(serverRepoID(w.repo), w.pull.BaseRef)
	pre, post = hooksFor(pre, name, "pre"), hooksFor(post, name, "post")
	if len(pre) > 0 {
		jobs, err := r.DB.RequestJobs(ctx, w.req.ID)
		if err != nil {
			return err
		}
		if len(jobs) == 0 && !r.runHooks(ctx, w, "pre", name, cmd, pre) && r.FailOnPreWorkflowHookError {
			return nil // the failure was commented; the command does not run
		}
	}
	err := run()
	r.runHooks(ctx, w, "post", name, cmd, post)
	return err
}

// runHooks runs hooks one by one in the repository root of the head
// commit's checkout. Only the server's configured commands reach a shell;
// the comment's arguments reach them as COMMENT_ARGS only. Each hook has
// a commit status, as in Atlantis: "<status name>/pre_workflow_hook:
// <label>" (post_workflow_hook for post hooks), pending while it runs,
// then success or failure; a hook may set the description of its success
// by writing it to the file named by OUTPUT_STATUS_FILE. It reports
// whether every hook succeeded; the first failure ends the hooks, as in
// Atlantis (and, with --fail-on-pre-workflow-hook-error, a pre hook's
// stops the command).
func (r *Runner) runHooks(ctx context.Context, w *work, which, name string, cmd *command.Command, hooks []repocfg.Hook) bool {
	if len(hooks) == 0 {
		return true
	}
	stops := which == "pre" && r.FailOnPreWorkflowHookError
	root, err := r.checkout(ctx, w, atoll.DefaultWorkspace, w.pull.HeadSHA)
	if err != nil {
		w.log.Warn(which+" workflow hooks: checkout", "err", err)
		if stops {
			r.hookFailed(ctx, w, which, name, "checkout", errors.New("the pull request could not be checked out"), "")
		}
		return false
	}
	env := append(pullEnv(w, w.pull.HeadSHA, w.req.User, cmd.ExtraArgs), "DIR="+root, "COMMAND_NAME="+name)
	statusDir, err := os.MkdirTemp("", "atoll-hook-status-")
	if err != nil {
		w.log.Warn(which+" workflow hooks: status file directory", "err", err)
	} else {
		defer os.RemoveAll(statusDir)
	}
	for i, h := range hooks {
		label := h.Description
		kind := which + "_workflow_hook"
		r.reporter().status(ctx, w, w.pull.HeadSHA, kind, label, vcs.StatusPending, hookStatusDescription(vcs.StatusPending, ""), r.reporter().pullURL(w))
		hookEnv, statusFile := env, ""
		if statusDir != "" {
			statusFile = filepath.Join(statusDir, strconv.Itoa(i))
			hookEnv = append(slices.Clip(env), "OUTPUT_STATUS_FILE="+statusFile)
		}
		shell, args := cmp.Or(h.Shell, "sh"), strings.Fields(cmp.Or(h.ShellArgs, "-c"))
		argv := append(append([]string{shell}, args...), h.Run)
		out, err := r.Terraform.Command(ctx, root, argv, hookEnv, nil)
		if err == nil {
			w.log.Info(which+" workflow hook ran", "hook", label)
			r.reporter().status(ctx, w, w.pull.HeadSHA, kind, label, vcs.StatusSuccess, hookStatusDescription(vcs.StatusSuccess, readStatusFile(statusFile)), r.reporter().pullURL(w))
			continue
		}
		w.log.Warn(which+" workflow hook failed", "hook", label, "err", err)
		r.reporter().status(ctx, w, w.pull.HeadSHA, kind, label, vcs.StatusFailure, hookStatusDescription(vcs.StatusFailure, ""), r.reporter().pullURL(w))
		r.hookFailed(ctx, w, which, name, label, err, out)
		// As in Atlantis, the first failure ends the phase's hooks.
		return false
	}
	return true
}

// hookLabel names a hook in its commit status and comments: its
// description, else Atlantis's "Pre workflow hook #0" (counted from 0).
func hookLabel(which string, i int, h repocfg.Hook) string {
	return cmp.Or(h.Description, fmt.Sprintf("%s%s workflow hook #%d", strings.ToUpper(which[:1]), which[1:], i))
}

// hookStatusDescription is a hook status's description, as Atlantis's: what
// the hook wrote to OUTPUT_STATUS_FILE (custom), else the state in words.
func hookStatusDescription(state, custom string) string {
	if custom != "" {
		return custom
	}
	switch state {
	case vcs.StatusPending:
		return "in progress..."
	case vcs.StatusFailure:
		return "failed."
	}
	return "succeeded."
}

// hookStatusFileMax bounds what is read of OUTPUT_STATUS_FILE: a status
// description is short (GitHub keeps 140 characters).
const hookStatusFileMax = 4 << 10

// readStatusFile returns what a hook wrote to its OUTPUT_STATUS_FILE,
// without the surrounding newlines, or "" when it wrote none.
func readStatusFile(path string) string {
	if path == "" {
		return ""
	}
	f, err := os.Open(path)
	if err != nil {
		return ""
	}
	defer f.Close()
	b, _ := io.ReadAll(io.LimitReader(f, hookStatusFileMax))
	return strings.Trim(string(b), "\n")
}

// hookFailed comments a failed hook with the end of its output.
func (r *Runner) hookFailed(ctx context.Context, w *work, which, name, label string, err error, out string) {
	if len(out) > hookOutputTail {
		out = "…" + out[len(out)-hookOutputTail:]
	}
	outcome := fmt.Sprintf("The %s goes on.", name)
	if which == "pre" && r.FailOnPreWorkflowHookError {
		outcome = fmt.Sprintf("The %s was not run (--fail-on-pre-workflow-hook-error).", name)
	}
	body := fmt.Sprintf("**%s workflow hook failed**: %s (%s). %s\n\n```\n%s\n```",
		strings.ToUpper(which[:1])+which[1:], label, err, outcome, strings.TrimRight(out, "\n"))
	if rerr := r.reporter().reply(ctx, w, "hook", body); rerr != nil {
		w.log.Warn("comment failed workflow hook", "err", rerr)
	}
}

// hooksFor keeps the hooks whose commands include command, each with a
// description: a hook without one is named by hookLabel after its place
// among all the phase's hooks, as Atlantis numbers them.
func hooksFor(hooks []repocfg.Hook, command, which string) []repocfg.Hook {
	var out []repocfg.Hook
	for i, h := range hooks {
		if h.RunsFor(command) {
			h.Description = hookLabel(which, i, h)
			out = append(out, h)
		}
	}
	return out
}
