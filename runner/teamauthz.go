package runner

import (
	"context"
	"fmt"
	"strings"
	"time"

	"github.com/atollhq/atoll"
	"github.com/atollhq/atoll/command"
	"github.com/atollhq/atoll/repocfg"
	"github.com/atollhq/atoll/vcs"
)

// teamAuthzTimeout bounds one run of the team_authz command: a command that
// hangs refuses, it does not hold up the pull request's requests.
const teamAuthzTimeout = 30 * time.Second

// teamAuthzReasonMax bounds the refusal reason quoted in a comment.
const teamAuthzReasonMax = 300

// authzTarget is what a team_authz run is asked about: the command alone
// (no project), or one project of it.
type authzTarget struct {
	project, dir, workspace, root string
}

// teamAuthz is the server config's team_authz, or nil.
func (r *Runner) teamAuthz() *repocfg.TeamAuthz {
	if r.ServerConfig == nil {
		return nil
	}
	return r.ServerConfig.TeamAuthz
}

// authzChecked reports whether the request is one team_authz governs: as
// --gh-team-allowlist, comments and autoplans from the host's webhooks;
// the dashboard and the API are governed by Atoll's roles.
func authzChecked(w *work, cmd string) bool {
	return cmd != command.Help && (w.req.Source == atoll.SourcePRComment || w.req.Source == atoll.SourceWebhook)
}

// runTeamAuthz runs team_authz's command as Atlantis's external team
// authorizer does: argv is the command, its args, then the command name,
// the repository's owner/name and each of the user's teams as owner/team;
// it is allowed when the last line of its output is "pass" (any case) and
// it exits 0. Otherwise the last line is the reason. It runs without a
// shell (unless the configured command is one) and with Terraform's
// environment minus Atoll's secrets, plus Atlantis's variables.
func (r *Runner) runTeamAuthz(ctx context.Context, w *work, a *repocfg.TeamAuthz, cmd string, teams []string, t authzTarget) (bool, string, error) {
	argv := append([]string{a.Command}, a.Args...)
	argv = append(argv, cmd, w.repo.FullName())
	for _, team := range teams {
		argv = append(argv, w.repo.Owner+"/"+team)
	}
	env := append(pullEnv(w, w.pull.HeadSHA, w.req.User, nil), "COMMAND_NAME="+cmd,
		"PROJECT_NAME="+t.project, "REPO_REL_PATH="+t.dir, "WORKSPACE="+t.workspace, "REPO_ROOT="+t.root)
	// Only the inherited environment: not the server's extra Terraform
	// settings nor a run's credential grant.
	tf := r.Terraform
	tf.Env, tf.RunEnv = nil, nil
	ctx, cancel := context.WithTimeout(ctx, teamAuthzTimeout)
	defer cancel()
	out, err := tf.Command(ctx, "", argv, env, nil)
	if err != nil {
		if ctx.Err() != nil {
			err = fmt.Errorf("did not finish in time (at most %s)", teamAuthzTimeout)
		}
		return false, "", fmt.Errorf("team_authz %s: %w", a.Command, err)
	}
	out = strings.TrimSpace(out)
	last := strings.TrimSpace(out[strings.LastIndexByte(out, '\n')+1:])
	if strings.EqualFold(last, "pass") {
		return true, "", nil
	}
	if r := []rune(last); len(r) > teamAuthzReasonMax {
		last = string(r[:teamAuthzReasonMax]) + "…"
	}
	return false, last, nil
}

// userTeams lists the request's user's teams in the repository's owner
// (GitHub organizations); none on hosts without teams.
func userTeams(ctx context.Context, w *work) ([]string, error) {
	lister, ok := vcs.As[vcs.TeamLister](w.vcs)
	if !ok {
		return nil, nil
	}
	return lister.UserTeams(ctx, *w.repo, w.req.User)
}

// externalAllowed is teamAllowed under team_authz: the command is asked
// about without a project. A refusal or a failure to decide runs nothing
// and, for a comment, tells the pull request why; a refused autoplan is
// only logged, as in Atlantis.
func (r *Runner) externalAllowed(ctx context.Context, w *work, a *repocfg.TeamAuthz, cmd string) (bool, error) {
	if !authzChecked(w, cmd) {
		return true, nil
	}
	ok, reason, err := r.authorize(ctx, w, a, cmd, authzTarget{})
	if ok {
		return true, nil
	}
	if w.req.Kind != atoll.RequestComment {
		w.log.Info("team_authz refused the autoplan", "user", w.req.User, "reason", reason, "err", err)
		return false, nil
	}
	return false, r.reporter().reply(ctx, w, "error", authzRefusal(w, cmd, "", reason, err))
}

// authorize lists the user's teams and runs team_authz for t.
func (r *Runner) authorize(ctx context.Context, w *work, a *repocfg.TeamAuthz, cmd string, t authzTarget) (bool, string, error) {
	teams, err := userTeams(ctx, w)
	if err != nil {
		w.log.Error("team_authz: list the user's teams", "user", w.req.User, "err", err)
		return false, "", fmt.Errorf("listing the teams of @%s in %s failed (%s)", w.req.User, w.repo.Owner, atoll.ErrorMessage(err))
	}
	ok, reason, err := r.runTeamAuthz(ctx, w, a, cmd, teams, t)
	if err != nil {
		w.log.Warn("team_authz command failed", "user", w.req.User, "command", cmd, "project", t.project, "err", err)
	} else if !ok {
		w.log.Info("team_authz refused", "user", w.req.User, "command", cmd, "project", t.project, "reason", reason)
	}
	return ok, reason, err
}

// authzRefusal is the comment for a refused command (project "") or project.
func authzRefusal(w *work, cmd, project, reason string, err error) string {
	what := fmt.Sprintf("`%s`", cmd)
	if project != "" {
		what = fmt.Sprintf("`%s` for project `%s`", cmd, project)
	}
	if err != nil {
		return fmt.Sprintf("**Atoll could not check whether @%s may run %s**: %s. Nothing was run.",
			w.req.User, what, authzErrorText(err))
	}
	body := fmt.Sprintf("**@%s is not allowed to run %s on this repository**: the server's team_authz command refused it", w.req.User, what)
	if reason != "" {
		body += ": " + reason
	} else {
		body += "."
	}
	if project == "" {
		body += " Nothing was run."
	}
	return body
}

// authzErrorText is a failure to decide, without the command's output
// (which is the operator's script's and may say anything).
func authzErrorText(err error) string {
	msg := err.Error()
	if i := strings.IndexByte(msg, '\n'); i >= 0 {
		msg = msg[:i]
	}
	return msg
}

// authzProjects keeps the targets team_authz allows for cmd, as Atlantis's
// per-project check does (PROJECT_NAME, REPO_REL_PATH and WORKSPACE set);
// the refused ones are told in one comment (logged for an autoplan).
func (r *Runner) authzProjects(ctx context.Context, w *work, cmd string, targets []authzTarget) []bool {
	keep := make([]bool, len(targets))
	a := r.teamAuthz()
	if a == nil || !authzChecked(w, cmd) {
		for i := range keep {
			keep[i] = true
		}
		return keep
	}
	var refused []string
	for i, t := range targets {
		ok, reason, err := r.authorize(ctx, w, a, cmd, t)
		keep[i] = ok
		if !ok {
			refused = append(refused, "- "+authzRefusal(w, cmd, projectLabel(t.dir, t.workspace, t.project), reason, err))
		}
	}
	if len(refused) > 0 && w.req.Kind == atoll.RequestComment {
		body := "**team_authz refused some projects; they are left out:**\n\n" + strings.Join(refused, "\n")
		if err := r.reporter().reply(ctx, w, "error", body); err != nil {
			w.log.Warn("comment team_authz refusals", "err", err)
		}
	}
	return keep
}

// intakeAuthz is intakeTeamAllows under team_authz: the command runs at
// intake for a cancel (bounded by intakeLookupTimeout), so that someone it
// refuses cancels nothing; the queued request answers the refusal.
func (r *Runner) intakeAuthz(ctx context.Context, ev *vcs.Event, a *repocfg.TeamAuthz, cmd string) bool {
	if ev.Source != "" && ev.Source != atoll.SourcePRComment {
		return true
	}
	p, err := r.provider(ev.Repo.VCS)
	if err != nil {
		return false
	}
	ctx, cancel := context.WithTimeout(ctx, intakeLookupTimeout)
	defer cancel()
	repo, pull := ev.Repo, ev.Pull
	w := &work{req: &atoll.Request{User: ev.User, Source: atoll.SourcePRComment}, repo: &repo, pull: &pull, vcs: p, log: r.Logger}
	teams, err := userTeams(ctx, w)
	if err != nil {
		return false
	}
	ok, _, err := r.runTeamAuthz(ctx, w, a, cmd, teams, authzTarget{})
	return err == nil && ok
}

// authzPlanProjects keeps the projects team_authz lets the user plan
// (import, state rm: cmd).
func (r *Runner) authzPlanProjects(ctx context.Context, w *work, cmd, root string, projects []repocfg.Project) []repocfg.Project {
	if r.teamAuthz() == nil {
		return projects
	}
	targets := make([]authzTarget, len(projects))
	for i, p := range projects {
		targets[i] = authzTarget{project: p.Name, dir: p.Dir, workspace: p.Workspace, root: root}
	}
	keep := r.authzProjects(ctx, w, cmd, targets)
	var out []repocfg.Project
	for i, p := range projects {
		if keep[i] {
			out = append(out, p)
		}
	}
	return out
}

// authzApplyJobs keeps the apply jobs team_authz lets the user run. The
// checkout is not at hand here: REPO_ROOT is empty.
func (r *Runner) authzApplyJobs(ctx context.Context, w *work, jobs []*atoll.Job) []*atoll.Job {
	if r.teamAuthz() == nil {
		return jobs
	}
	targets := make([]authzTarget, len(jobs))
	for i, j := range jobs {
		targets[i] = authzTarget{project: j.Project, dir: j.Dir, workspace: j.Workspace}
	}
	keep := r.authzProjects(ctx, w, command.Apply, targets)
	var out []*atoll.Job
	for i, j := range jobs {
		if keep[i] {
			out = append(out, j)
		}
	}
	return out
}
