package web

import (
	"net/http"
	"regexp"
	"strconv"
	"strings"
	"time"

	"github.com/atollhq/atoll"
	"github.com/atollhq/atoll/store"
	"github.com/atollhq/atoll/templates"
)

// handleLocksPage lists the locks, filtered by repo, pull, user and age
// (older=12h, 3d, 90m, 2w), with checkboxes for operators.
func (s *Server) handleLocksPage(w http.ResponseWriter, r *http.Request) {
	ctx := r.Context()
	q := r.URL.Query()
	get := func(k string) string { return strings.TrimSpace(q.Get(k)) }
	typed := templates.LockFilter{Repo: get("repo"), Pull: strings.TrimPrefix(get("pull"), "#"), User: get("user"), Older: get("older")}
	u := atoll.UserFromContext(ctx)
	page := templates.LocksPage{Meta: s.pageMeta(ctx), Filter: typed, Back: r.URL.RequestURI(),
		CanUnlock: u != nil && u.Role.Allows(atoll.RoleOperator)}
	f, err := lockFilter(typed, page.Meta.Now)
	if err == nil {
		page.Locks, err = s.DB.FilteredLocks(ctx, f)
	}
	if err == nil {
		page.Total, err = s.DB.LockCount(ctx)
	}
	if err != nil {
		if atoll.ErrorCode(err) != atoll.EINVALID {
			s.pageError(w, r, err)
			return
		}
		page.Meta.Flash, page.Meta.FlashOK = atoll.ErrorMessage(err), false
		s.renderPage(w, r, http.StatusBadRequest, templates.Locks(page))
		return
	}
	s.renderPage(w, r, http.StatusOK, templates.Locks(page))
}

var ageRE = regexp.MustCompile(`^(\d{1,6})\s*(m|min|h|d|w)$`)

// lockFilter turns the typed filter into a store filter; ages count back
// from now.
func lockFilter(t templates.LockFilter, now time.Time) (store.LockFilter, error) {
	f := store.LockFilter{Repo: t.Repo, User: t.User}
	if t.Repo != "" && !strings.Contains(strings.Trim(t.Repo, "/"), "/") {
		return f, atoll.Errorf(atoll.EINVALID, "Repository must be owner/name, not %q.", t.Repo)
	}
	if t.Pull != "" {
		n, err := strconv.Atoi(t.Pull)
		if err != nil || n <= 0 {
			return f, atoll.Errorf(atoll.EINVALID, "Invalid pull request number %q.", t.Pull)
		}
		f.Pull = n
	}
	if t.Older != "" {
		m := ageRE.FindStringSubmatch(strings.ToLower(t.Older))
		if m == nil {
			return f, atoll.Errorf(atoll.EINVALID, "Invalid age %q: a number and a unit, e.g. 90m, 12h, 3d or 2w.", t.Older)
		}
		n, _ := strconv.Atoi(m[1])
		unit := map[string]time.Duration{"m": time.Minute, "min": time.Minute, "h": time.Hour, "d": 24 * time.Hour, "w": 7 * 24 * time.Hour}[m[2]]
		f.OlderThan = now.Add(-time.Duration(n) * unit)
	}
	return f, nil
}
