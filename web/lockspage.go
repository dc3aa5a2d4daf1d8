package web

import (
	"net/http"
	"net/url"
	"regexp"
	"strconv"
	"strings"
	"time"

	"github.com/atollhq/atoll"
	"github.com/atollhq/atoll/templates"
)

// locksPageSize bounds the locks on one page: 10,000 rows would be 6 MB of
// HTML and take a browser seconds.
const locksPageSize = 200

// handleLocksPage lists the locks, oldest first, filtered by repo, pull,
// user and age (older=12h, 3d, 90m, 2w), locksPageSize a page (after= a
// lock id), with checkboxes for operators.
func (s *Server) handleLocksPage(w http.ResponseWriter, r *http.Request) {
	ctx := r.Context()
	q := r.URL.Query()
	get := func(k string) string { return strings.TrimSpace(q.Get(k)) }
	typed := templates.LockFilter{Repo: get("repo"), Pull: strings.TrimPrefix(get("pull"), "#"), User: get("user"), Older: get("older")}
	u := atoll.UserFromContext(ctx)
	page := templates.LocksPage{Meta: s.pageMeta(ctx), Filter: typed, Back: r.URL.RequestURI(),
		CanUnlock: u != nil && u.Role.Allows(atoll.RoleOperator)}
	f, err := lockFilter(typed, page.Meta.Now)
	if err == nil && get("after") != "" {
		if f.After, err = atoll.ParseID(get("after")); err != nil {
			err = atoll.Errorf(atoll.EINVALID, "Invalid after %q: use a lock id.", get("after"))
		}
	}
	if err == nil {
		f.Limit = locksPageSize + 1
		page.Locks, err = s.DB.FilteredLocks(ctx, f)
	}
	if err == nil {
		pageURL := func(after int64) string {
			v := url.Values{}
			for k, val := range map[string]string{"repo": typed.Repo, "pull": typed.Pull, "user": typed.User, "older": typed.Older} {
				if val != "" {
					v.Set(k, val)
				}
			}
			if after != 0 {
				v.Set("after", strconv.FormatInt(after, 10))
			}
			if len(v) == 0 {
				return "/locks"
			}
			return "/locks?" + v.Encode()
		}
		if len(page.Locks) > locksPageSize {
			page.Locks = page.Locks[:locksPageSize]
			page.NextURL = pageURL(page.Locks[locksPageSize-1].ID)
		}
		if f.After != 0 {
			page.FirstURL = pageURL(0)
		}
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
func lockFilter(t templates.LockFilter, now time.Time) (atoll.LockFilter, error) {
	f := atoll.LockFilter{Repo: t.Repo, User: t.User}
	if err := repoParam(t.Repo); err != nil {
		return f, err
	}
	var err error
	if f.Pull, err = pullParam(t.Pull); err != nil {
		return f, err
	}
	if t.Older != "" {
		m := ageRE.FindStringSubmatch(strings.ToLower(t.Older))
		if m == nil {
			return f, atoll.Errorf(atoll.EINVALID, "Invalid older %q: use a number and a unit, e.g. 90m, 12h, 3d or 2w.", t.Older)
		}
		n, _ := strconv.Atoi(m[1])
		unit := map[string]time.Duration{"m": time.Minute, "min": time.Minute, "h": time.Hour, "d": 24 * time.Hour, "w": 7 * 24 * time.Hour}[m[2]]
		f.OlderThan = now.Add(-time.Duration(n) * unit)
	}
	return f, nil
}
