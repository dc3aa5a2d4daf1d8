package web

import (
	"maps"
	"net/url"
	"slices"
	"strconv"
	"strings"
	"time"

	"github.com/atollhq/atoll"
	"github.com/atollhq/atoll/templates"
)

// The filters of lists are read here, and only here: the runs, locks and
// audit pages and the JSON API's lists share the parsers below, so that a
// parameter means the same and is refused the same way everywhere (400,
// naming the parameter and what it takes).

// The parameters each list of the JSON API takes.
var (
	jobParams    = []string{"repo", "pull", "project", "kind", "state", "user", "from", "to", "before", "after", "limit"}
	searchParams = append(slices.Clip(jobParams), "q")
	pullParams   = []string{"repo", "state"}
	auditParams  = []string{"actor", "action", "repo", "since", "before", "limit"}
	lockParams   = []string(nil) // GET /api/v1/locks lists every lock
)

// pullStates are the values of a pull request filter's state.
var pullStates = []string{atoll.PullOpen, atoll.PullClosed, atoll.PullMerged}

// listParams checks the query of a JSON API list: every parameter one the
// list takes, each given once. A misspelt or unknown filter would
// otherwise be no filter at all, and a repeated one would have one of its
// values picked silently. (Pages ignore parameters they do not take: links
// may carry others.)
func listParams(q url.Values, takes []string) error {
	for _, k := range slices.Sorted(maps.Keys(q)) {
		if !slices.Contains(takes, k) {
			what := strings.Join(takes, ", ")
			if what == "" {
				what = "no parameters"
			}
			return atoll.Errorf(atoll.EINVALID, "Unknown parameter %q: this list takes %s.", k, what)
		}
		if len(q[k]) > 1 {
			return atoll.Errorf(atoll.EINVALID, "The parameter %q is given %d times: give it once.", k, len(q[k]))
		}
	}
	return nil
}

// oneOf checks that parameter k's value v, if any, is one of allowed.
func oneOf(k, v string, allowed []string) error {
	if v == "" || slices.Contains(allowed, v) {
		return nil
	}
	return atoll.Errorf(atoll.EINVALID, "Invalid %s %q: use one of %s.", k, v, strings.Join(allowed, ", "))
}

// repoParam checks a repo parameter: owner/name.
func repoParam(v string) error {
	if v != "" && !strings.Contains(strings.Trim(v, "/"), "/") {
		return atoll.Errorf(atoll.EINVALID, "Invalid repo %q: use owner/name.", v)
	}
	return nil
}

// pullParam reads a pull parameter: a pull request number, 0 when v is "".
func pullParam(v string) (int, error) {
	if v == "" {
		return 0, nil
	}
	n, err := strconv.Atoi(v)
	if err != nil || n <= 0 {
		return 0, atoll.Errorf(atoll.EINVALID, "Invalid pull %q: use a pull request number.", v)
	}
	return n, nil
}

// pullFilter reads the filters of GET /api/v1/pulls: repo and state.
func pullFilter(q url.Values) (atoll.PullFilter, error) {
	f := atoll.PullFilter{Repo: strings.TrimSpace(q.Get("repo")), State: strings.TrimSpace(q.Get("state"))}
	if err := repoParam(f.Repo); err != nil {
		return f, err
	}
	return f, oneOf("state", f.State, pullStates)
}

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
	err := repoParam(typed.Repo)
	if err == nil {
		err = oneOf("kind", typed.Kind, templates.JobKinds)
	}
	if err == nil {
		err = oneOf("state", typed.State, templates.JobStates)
	}
	if err == nil {
		f.Pull, err = pullParam(typed.Pull)
	}
	if err != nil {
		return f, typed, err
	}
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
				return f, typed, atoll.Errorf(atoll.EINVALID, "Invalid %s %q: use a job id.", c.key, v)
			}
		}
	}
	if f.Before != 0 && f.After != 0 {
		return f, typed, atoll.Errorf(atoll.EINVALID, "Page either before or after a job, not both.")
	}
	if v := get("limit"); v != "" {
		if f.Limit, err = strconv.Atoi(v); err != nil || f.Limit <= 0 || f.Limit > 1000 {
			return f, typed, atoll.Errorf(atoll.EINVALID, "Invalid limit %q: use 1 to 1000.", v)
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
		return time.Time{}, atoll.Errorf(atoll.EINVALID, "Invalid %s %q: use a date, YYYY-MM-DD (a day in UTC).", name, s)
	}
	return t, nil
}
