package web

import (
	"net/url"
	"slices"
	"strconv"
	"strings"
	"time"

	"github.com/atollhq/atoll"
	"github.com/atollhq/atoll/templates"
)

// jobFilter reads the runs filters shared by GET /runs, GET /api/v1/jobs
// and GET /api/v1/search: repo, pull, project, kind, state, user, from and
// to (dates, YYYY-MM-DD, whole UTC days, both included), before or after
// (job id cursors) and limit. It also returns the filter as typed, for the
// page's form.
func jobFilter(q url.Values) (atoll.JobFilter, templates.RunsFilter, error) {
	get := func(k string) string { return strings.TrimSpace(q.Get(k)) }
	typed := templates.RunsFilter{Repo: get("repo"), Pull: strings.TrimPrefix(get("pull"), "#"), Project: get("project"),
		Kind: get("kind"), State: get("state"), User: get("user"), From: get("from"), To: get("to"), Q: get("q")}
	f := atoll.JobFilter{Repo: typed.Repo, Project: typed.Project, Kind: typed.Kind, State: typed.State, User: typed.User}
	if typed.Repo != "" && !strings.Contains(strings.Trim(typed.Repo, "/"), "/") {
		return f, typed, atoll.Errorf(atoll.EINVALID, "Repository must be owner/name, not %q.", typed.Repo)
	}
	if typed.Kind != "" && !slices.Contains(templates.JobKinds, typed.Kind) {
		return f, typed, atoll.Errorf(atoll.EINVALID, "Unknown kind %q: use %s.", typed.Kind, strings.Join(templates.JobKinds, " or "))
	}
	if typed.State != "" && !slices.Contains(templates.JobStates, typed.State) {
		return f, typed, atoll.Errorf(atoll.EINVALID, "Unknown state %q: use one of %s.", typed.State, strings.Join(templates.JobStates, ", "))
	}
	if typed.Pull != "" {
		n, err := strconv.Atoi(typed.Pull)
		if err != nil || n <= 0 {
			return f, typed, atoll.Errorf(atoll.EINVALID, "Invalid pull request number %q.", typed.Pull)
		}
		f.Pull = n
	}
	var err error
	if f.From, err = day(typed.From, "from"); err != nil {
		return f, typed, err
	}
	if f.To, err = day(typed.To, "to"); err != nil {
		return f, typed, err
	}
	if !f.To.IsZero() {
		f.To = f.To.AddDate(0, 0, 1) // the whole day
	}
	for _, c := range []struct {
		key string
		to  *int64
	}{{"before", &f.Before}, {"after", &f.After}} {
		if v := get(c.key); v != "" {
			if *c.to, err = atoll.ParseID(v); err != nil {
				return f, typed, atoll.Errorf(atoll.EINVALID, "Invalid %s cursor %q: a job id.", c.key, v)
			}
		}
	}
	if f.Before != 0 && f.After != 0 {
		return f, typed, atoll.Errorf(atoll.EINVALID, "Page either before or after a job, not both.")
	}
	if v := get("limit"); v != "" {
		if f.Limit, err = strconv.Atoi(v); err != nil || f.Limit <= 0 || f.Limit > 1000 {
			return f, typed, atoll.Errorf(atoll.EINVALID, "Invalid limit %q: 1 to 1000.", v)
		}
	}
	return f, typed, nil
}

// day parses a YYYY-MM-DD date as the start of that day in UTC.
func day(s, name string) (time.Time, error) {
	if s == "" {
		return time.Time{}, nil
	}
	t, err := time.Parse(time.DateOnly, s)
	if err != nil {
		return time.Time{}, atoll.Errorf(atoll.EINVALID, "Invalid %s date %q: use YYYY-MM-DD (a day in UTC).", name, s)
	}
	return t, nil
}
