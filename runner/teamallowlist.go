package runner

import (
	"context"
	"fmt"
	"slices"
	"strings"
	"time"

	"github.com/atollhq/atoll"
	"github.com/atollhq/atoll/command"
	"github.com/atollhq/atoll/vcs"
)

// TeamRule lets the members of Team run Command; "*" stands for any team
// or any command.
type TeamRule struct{ Team, Command string }

// TeamAllowlist is --gh-team-allowlist, Atlantis syntax:
// "team:command,team:command", e.g. "dev:plan,ops:apply,devops:*". Empty
// (nil) checks nothing, as Atlantis's default "*:*" does. It governs
// comments on GitHub pull requests (and their autoplan); the dashboard and
// the API are governed by Atoll's roles instead.
type TeamAllowlist []TeamRule

// ParseTeamAllowlist parses --gh-team-allowlist. A command must be one a
// comment can run, or "*".
func ParseTeamAllowlist(s string) (TeamAllowlist, error) {
	var out TeamAllowlist
	for _, pair := range strings.Split(s, ",") {
		if strings.TrimSpace(pair) == "" {
			continue
		}
		team, cmd, ok := strings.Cut(pair, ":")
		team, cmd = strings.TrimSpace(team), strings.TrimSpace(cmd)
		if !ok || team == "" || cmd == "" || strings.Contains(cmd, ":") {
			return nil, atoll.Errorf(atoll.EINVALID, "team allowlist entry %q: want TEAM:COMMAND, e.g. ops:apply", strings.TrimSpace(pair))
		}
		if cmd != "*" && !slices.Contains(command.AllCommands, strings.ToLower(cmd)) {
			return nil, atoll.Errorf(atoll.EINVALID, "team allowlist entry %q: unknown command %q (want one of %s, or *)", strings.TrimSpace(pair), cmd, strings.Join(command.AllCommands, ", "))
		}
		out = append(out, TeamRule{Team: team, Command: cmd})
	}
	return out, nil
}

// Allows reports whether a member of teams (slugs) may run cmd: some rule
// names one of the teams, or "*", and cmd, or "*". Case does not matter.
func (a TeamAllowlist) Allows(teams []string, cmd string) bool {
	for _, r := range a {
		if r.Command != "*" && !strings.EqualFold(r.Command, cmd) {
			continue
		}
		if r.Team == "*" || slices.ContainsFunc(teams, func(t string) bool { return strings.EqualFold(t, r.Team) }) {
			return true
		}
	}
	return false
}

// teamsFor lists the teams the list lets run cmd, for the refusal.
func (a TeamAllowlist) teamsFor(cmd string) []string {
	var out []string
	for _, r := range a {
		if (r.Command == "*" || strings.EqualFold(r.Command, cmd)) && !slices.Contains(out, r.Team) {
			out = append(out, r.Team)
		}
	}
	return out
}

// teamAllowed checks --gh-team-allowlist for the request's user and cmd.
// It says no (and, for a comment, tells the pull request why) when the
// user belongs to no team allowed to run cmd. Only requests from the
// host's webhooks are checked, on hosts with teams (GitHub).
func (r *Runner) teamAllowed(ctx context.Context, w *work, cmd string) (bool, error) {
	if a := r.teamAuthz(); a != nil { // team_authz replaces the list, as in Atlantis
		return r.externalAllowed(ctx, w, a, cmd)
	}
	if len(r.TeamAllowlist) == 0 || cmd == command.Help || (w.req.Source != atoll.SourcePRComment && w.req.Source != atoll.SourceWebhook) {
		return true, nil
	}
	lister, ok := vcs.As[vcs.TeamLister](w.vcs)
	if !ok {
		return true, nil
	}
	if r.TeamAllowlist.Allows(nil, cmd) { // a "*" team rule: no need to ask
		return true, nil
	}
	comment := w.req.Kind == atoll.RequestComment
	teams, err := lister.UserTeams(ctx, *w.repo, w.req.User)
	if err != nil {
		w.log.Error("team allowlist: list the user's teams", "user", w.req.User, "err", err)
		if !comment {
			return false, nil
		}
		return false, r.reporter().reply(ctx, w, "error", fmt.Sprintf("**Atoll could not check whether @%s may run `%s`**: listing their teams in %s failed (%s). Nothing was run.",
			w.req.User, cmd, w.repo.Owner, atoll.ErrorMessage(err)))
	}
	if r.TeamAllowlist.Allows(teams, cmd) {
		return true, nil
	}
	// As in Atlantis, a refused autoplan is only logged.
	w.log.Info("team allowlist refused the command", "user", w.req.User, "command", cmd, "teams", teams)
	if !comment {
		return false, nil
	}
	allowed := "no team"
	if names := r.TeamAllowlist.teamsFor(cmd); len(names) > 0 {
		allowed = "`" + strings.Join(names, "`, `") + "`"
	}
	return false, r.reporter().reply(ctx, w, "error", fmt.Sprintf("**@%s is not allowed to run `%s` on this repository.** The server's --gh-team-allowlist lets members of these teams of %s run it: %s. "+
		"Ask an owner of %s to add you to one of them. Nothing was run.", w.req.User, cmd, w.repo.Owner, allowed, w.repo.Owner))
}

// intakeTeamAllows is teamAllowed for a cancel comment at intake, where a
// cancel acts at once: the user's teams are looked up there (cached, and
// bounded by a short timeout) so that someone the list refuses cancels
// nothing. When the lookup fails or refuses, the request is still queued:
// its turn answers with teamAllowed's comment.
func (r *Runner) intakeTeamAllows(ctx context.Context, ev *vcs.Event, cmd string) bool {
	if a := r.teamAuthz(); a != nil {
		return r.intakeAuthz(ctx, ev, a, cmd)
	}
	if len(r.TeamAllowlist) == 0 || (ev.Source != "" && ev.Source != atoll.SourcePRComment) || r.TeamAllowlist.Allows(nil, cmd) {
		return true
	}
	p, err := r.provider(ev.Repo.VCS)
	if err != nil {
		return false
	}
	lister, ok := vcs.As[vcs.TeamLister](p)
	if !ok {
		return true
	}
	ctx, cancel := context.WithTimeout(ctx, intakeLookupTimeout)
	defer cancel()
	teams, err := lister.UserTeams(ctx, ev.Repo, ev.User)
	return err == nil && r.TeamAllowlist.Allows(teams, cmd)
}

// intakeLookupTimeout bounds the team lookup a webhook waits for.
const intakeLookupTimeout = 10 * time.Second
