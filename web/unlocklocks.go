package web

import (
	"context"
	"fmt"
	"mime"
	"net/http"
	"strings"

	"github.com/atollhq/atoll"
	"github.com/atollhq/atoll/templates"
)

// maxUnlock bounds the locks one request releases.
const maxUnlock = 500

// unlockRequest is POST /locks/unlock: a form (id repeated, confirm=1,
// back=/local/path) or JSON ({"ids": [1, 2], "confirm": true}).
type unlockRequest struct {
	IDs     []int64 `json:"ids"`
	Confirm bool    `json:"confirm"`
	Back    string  `json:"back"`
}

// unlockResult is the JSON answer: what was released, and the ids that
// were not held (any more).
type unlockResult struct {
	Message  string        `json:"message"`
	Unlocked []*atoll.Lock `json:"unlocked"`
	Missing  []int64       `json:"missing"`
}

// handleUnlockLocks releases the chosen locks as the signed-in user, after
// a confirmation: a form posted without confirm=1 (no JavaScript, so no
// dialog answered it) gets a page listing the locks to confirm; JSON must
// say "confirm": true.
//
// Outcome per lock: in one transaction every chosen lock still held is
// released (LockService.ReleaseLocksByID, which also discards its plan and
// records the audit event); ids no longer held are reported, not an error,
// unless none was held. Then each pull request concerned is told who
// unlocked what, in one comment.
func (s *Server) handleUnlockLocks(w http.ResponseWriter, r *http.Request) {
	ctx := r.Context()
	user := atoll.UserFromContext(ctx) // s.require: never nil
	in, err := readUnlockRequest(w, r)
	back := "/locks"
	if strings.HasPrefix(in.Back, "/") {
		back = safeBack(in.Back)
	}
	if err != nil {
		s.failed(w, r, back, err)
		return
	}
	if !in.Confirm {
		if wantsHTML(r) && !isHTMX(r) {
			s.confirmUnlock(w, r, in.IDs, back)
			return
		}
		s.failed(w, r, back, atoll.Errorf(atoll.EINVALID, "Confirm the unlock: post confirm=1 (JSON: \"confirm\": true)."))
		return
	}
	var res unlockResult
	res.Unlocked, res.Missing, err = s.DB.ReleaseLocksByID(ctx, in.IDs, user.Name, source(r), "unlocked from the dashboard")
	if err == nil && len(res.Unlocked) == 0 {
		err = atoll.Errorf(atoll.ENOTFOUND, "Nothing was unlocked: %s not held (already released, or never existed).", lockIDs(res.Missing))
	}
	if err != nil {
		s.failed(w, r, back, err)
		return
	}
	res.Message = unlockMessage(res)
	if failed := s.tellUnlocked(ctx, res.Unlocked, user.Name, "the dashboard"); len(failed) > 0 {
		res.Message += fmt.Sprintf(" Could not comment on %s (see the server log).", strings.Join(failed, ", "))
	}
	res.Unlocked, res.Missing = nonNil(res.Unlocked), nonNil(res.Missing)
	s.done(w, r, back, res.Message, nil, res)
}

func readUnlockRequest(w http.ResponseWriter, r *http.Request) (unlockRequest, error) {
	var in unlockRequest
	if media, _, _ := mime.ParseMediaType(r.Header.Get("Content-Type")); media == "application/json" {
		if err := readJSON(w, r, &in, jsonBody{Limit: 1 << 20, AllowUnknown: true, Like: `{"ids":[1,2],"confirm":true}`}); err != nil {
			return in, err
		}
	} else {
		if err := readForm(w, r, 1<<20, "id"); err != nil {
			return in, err
		}
		in.Back, in.Confirm = r.PostForm.Get("back"), r.PostForm.Get("confirm") == "1"
		for _, v := range r.PostForm["id"] {
			id, err := atoll.ParseID(v)
			if err != nil {
				return in, atoll.Errorf(atoll.EINVALID, "Invalid lock id %q.", v)
			}
			in.IDs = append(in.IDs, id)
		}
	}
	// The same lock twice is one lock.
	seen := map[int64]bool{}
	ids := in.IDs[:0]
	for _, id := range in.IDs {
		if id <= 0 {
			return in, atoll.Errorf(atoll.EINVALID, "Invalid lock id %d.", id)
		}
		if !seen[id] {
			seen[id] = true
			ids = append(ids, id)
		}
	}
	in.IDs = ids
	switch {
	case len(in.IDs) == 0:
		return in, atoll.Errorf(atoll.EINVALID, "Choose at least one lock to unlock.")
	case len(in.IDs) > maxUnlock:
		return in, atoll.Errorf(atoll.EINVALID, "At most %d locks at once.", maxUnlock)
	}
	return in, nil
}

// confirmUnlock shows the locks an unconfirmed form would release.
func (s *Server) confirmUnlock(w http.ResponseWriter, r *http.Request, ids []int64, back string) {
	locks, err := s.DB.LocksByID(r.Context(), ids)
	if err != nil {
		s.pageError(w, r, err)
		return
	}
	held := map[int64]bool{}
	for _, l := range locks {
		held[l.ID] = true
	}
	page := templates.UnlockConfirmPage{Meta: s.pageMeta(r.Context()), Locks: locks, Back: back}
	for _, id := range ids {
		if !held[id] {
			page.Missing = append(page.Missing, id)
		}
	}
	s.renderPage(w, r, http.StatusOK, templates.UnlockConfirm(page))
}

// unlockMessage is the flash message: "Unlocked 2 locks: ….", and the ids
// that were not held.
func unlockMessage(res unlockResult) string {
	labels := make([]string, len(res.Unlocked))
	for i, l := range res.Unlocked {
		labels[i] = lockLabel(l)
	}
	noun := "locks"
	if len(labels) == 1 {
		noun = "lock"
	}
	msg := fmt.Sprintf("Unlocked %d %s: %s.", len(labels), noun, strings.Join(labels, ", "))
	if len(res.Missing) > 0 {
		msg += fmt.Sprintf(" Not held any more: %s.", lockIDs(res.Missing))
	}
	return msg
}

// lockLabel names a lock: acme/infra staging/default (#7).
func lockLabel(l *atoll.Lock) string {
	return fmt.Sprintf("%s %s (#%d)", l.Repo, atoll.Project{Name: l.Project, Dir: l.Dir, Workspace: l.Workspace}.Label(), l.Pull)
}

func lockIDs(ids []int64) string {
	s := make([]string, len(ids))
	for i, id := range ids {
		s[i] = fmt.Sprint(id)
	}
	if len(ids) == 1 {
		return "lock " + s[0] + " is"
	}
	return "locks " + strings.Join(s, ", ") + " are"
}

// tellUnlocked has each pull request whose locks were released told who
// did it, from where (via: "the dashboard", "the API"), and which
// projects. It returns the pull requests that could not be told
// (repo#number); the unlock stands anyway.
func (s *Server) tellUnlocked(ctx context.Context, locks []*atoll.Lock, user, via string) (failed []string) {
	if s.Unlocks == nil {
		return nil
	}
	return s.Unlocks.ReportUnlocked(ctx, locks, user, via)
}
