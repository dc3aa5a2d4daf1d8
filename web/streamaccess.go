package web

import (
	"context"
	"crypto/subtle"
	"errors"
	"net/http"
	"time"

	"github.com/atollhq/atoll"
)

// defaultStreamRecheck is how often a live stream checks again that its
// credential still signs its user in, when no change says so sooner: a
// standby, whose copy changes under it, publishes no user changes, nor
// does another process writing the database.
const defaultStreamRecheck = 5 * time.Second

// errAccessEnded is the cause of a live stream's context once its user may
// no longer read it (disabled, deleted, signed out, its token revoked).
var errAccessEnded = errors.New("access ended: sign in again")

// accessEnded reports whether ctx (from watchAccess) ended because its
// user's access did.
func accessEnded(ctx context.Context) bool {
	return errors.Is(context.Cause(ctx), errAccessEnded)
}

// watchAccess returns a context of r that ends, with cause errAccessEnded,
// once the credential r signed in with no longer signs in its user with
// role need: at once when the store publishes a change of that user
// (atoll.TopicUser), else within the recheck interval. The caller runs
// stop when the stream ends; it returns once the watch has.
func (s *Server) watchAccess(r *http.Request, need atoll.Role) (ctx context.Context, stop func()) {
	ctx, cancel := context.WithCancelCause(r.Context())
	u := atoll.UserFromContext(ctx)
	check := s.credentialCheck(r)
	if u == nil || check == nil {
		return ctx, func() { cancel(nil) }
	}
	var changes <-chan atoll.Change
	unsubscribe := func() {}
	if s.Changes != nil {
		// Subscribed before the first check, so that no change falls
		// between the two.
		changes, unsubscribe = s.Changes.Subscribe()
	}
	done := make(chan struct{})
	go func() {
		defer close(done)
		defer unsubscribe()
		tick := time.NewTicker(orDefault(s.streamRecheck, defaultStreamRecheck))
		defer tick.Stop()
		for {
			// The first check covers a change made after the request was
			// signed in and before the subscription.
			got, err := check(ctx)
			if err == nil && (got.ID != u.ID || !got.Role.Allows(need)) {
				err = atoll.Errorf(atoll.EFORBIDDEN, "%s may no longer read this stream.", u.Name)
			}
			if err != nil {
				if ctx.Err() == nil && s.Logger != nil {
					s.Logger.Info("live stream ended: access ended", "user", u.Name, "path", r.URL.Path, "err", err)
				}
				cancel(errAccessEnded)
				return
			}
			if !waitUserChange(ctx, changes, tick.C, u.ID) {
				return
			}
		}
	}()
	return ctx, func() {
		cancel(nil)
		<-done
	}
}

// waitUserChange waits until user id may have lost access (a change of
// that user, of any user, or changes lost) or tick; false once ctx ends.
func waitUserChange(ctx context.Context, changes <-chan atoll.Change, tick <-chan time.Time, id int64) bool {
	for {
		select {
		case c, ok := <-changes:
			switch {
			case !ok:
				changes = nil // the service ended the subscription: ticks only
			case c.Topic == "", c.Topic == atoll.TopicUser && (c.UserID == 0 || c.UserID == id):
				return true
			}
		case <-tick:
			return true
		case <-ctx.Done():
			return false
		}
	}
}

// credentialCheck returns how to ask again who the credential r signed in
// with (as whoIs took it) signs in, without recording a use: nil when
// there is nothing to check again (the --api-secret lasts as long as the
// process; a user put in the context by a test carries no credential).
func (s *Server) credentialCheck(r *http.Request) func(context.Context) (*atoll.User, error) {
	if token := requestToken(r); token != "" {
		if s.APISecret != "" && subtle.ConstantTimeCompare([]byte(token), []byte(s.APISecret)) == 1 {
			return nil
		}
		hash := atoll.HashSecret(token)
		return func(ctx context.Context) (*atoll.User, error) { return s.DB.CheckToken(ctx, hash) }
	}
	if name, _, ok := r.BasicAuth(); ok {
		// The password was checked when the stream began; checking it again
		// costs a bcrypt each time. The account's hash stands for it: a new
		// password ends the stream.
		pinned := ""
		if a, err := s.DB.UserByName(r.Context(), name); err == nil {
			pinned = a.PasswordHash
		}
		return func(ctx context.Context) (*atoll.User, error) {
			a, err := s.DB.UserByName(ctx, name)
			if err != nil {
				return nil, err
			}
			if a.Disabled || a.Source != atoll.UserSourceLocal || a.PasswordHash == "" || a.PasswordHash != pinned {
				return nil, atoll.Errorf(atoll.EUNAUTHORIZED, "The password no longer signs %s in.", name)
			}
			return &a.User, nil
		}
	}
	if c, err := r.Cookie(sessionCookie); err == nil && c.Value != "" {
		hash := atoll.HashSecret(c.Value)
		return func(ctx context.Context) (*atoll.User, error) { return s.DB.CheckSession(ctx, hash) }
	}
	return nil
}
