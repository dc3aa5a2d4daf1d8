package web_test

import (
	"bufio"
	"context"
	"errors"
	"fmt"
	"io"
	"net/http"
	"net/url"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/gorilla/websocket"
	"golang.org/x/crypto/bcrypt"

	"github.com/atollhq/atoll"
	"github.com/atollhq/atoll/inmem"
	"github.com/atollhq/atoll/store"
	"github.com/atollhq/atoll/web"
)

// promptly bounds how long a stream may outlive its user's access when the
// store tells it (shorter than the periodic check, so the change is what
// ends it).
const promptly = 3 * time.Second

// streamUser is a local account with each kind of credential.
type streamUser struct {
	user           *atoll.User
	password       string
	token, session string
	tokenID        int64
}

func newStreamUser(t *testing.T, db *store.DB, name string) *streamUser {
	t.Helper()
	hash, err := bcrypt.GenerateFromPassword([]byte(testPassword), bcrypt.MinCost)
	if err != nil {
		t.Fatal(err)
	}
	su := &streamUser{password: testPassword}
	var tokenHash, sessionHash []byte
	su.token, tokenHash = atoll.NewSecret()
	su.session, sessionHash = atoll.NewSecret()
	err = db.Update(context.Background(), func(tx *store.Tx) (err error) {
		if su.user, err = tx.CreateUser(atoll.NewUser{Name: name, Role: atoll.RoleOperator, Source: atoll.UserSourceLocal, PasswordHash: string(hash)}); err != nil {
			return err
		}
		if su.tokenID, err = tx.CreateToken(su.user.ID, "test", tokenHash); err != nil {
			return err
		}
		return tx.CreateSession(su.user.ID, sessionHash)
	})
	if err != nil {
		t.Fatal(err)
	}
	return su
}

// Ways a stream signs in.
func (su *streamUser) bearer() http.Header {
	return http.Header{"Authorization": {"Bearer " + su.token}}
}

func (su *streamUser) cookie() http.Header {
	return http.Header{"Cookie": {"atoll_session=" + su.session}}
}

func (su *streamUser) basic() http.Header {
	return http.Header{"Authorization": {basicAuth(su.user.Name, su.password)}}
}

// openChangesWith opens GET /api/v1/changes signed in by header.
func openChangesWith(t *testing.T, base string, header http.Header) *sseStream {
	t.Helper()
	req, err := http.NewRequest(http.MethodGet, base+"/api/v1/changes", nil)
	if err != nil {
		t.Fatal(err)
	}
	req.Header = header
	res, err := (&http.Client{Timeout: 20 * time.Second}).Do(req)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { res.Body.Close() })
	if res.StatusCode != http.StatusOK {
		b, _ := io.ReadAll(res.Body)
		t.Fatalf("GET /api/v1/changes: %d %s", res.StatusCode, b)
	}
	st := &sseStream{res: res, rd: bufio.NewReader(res.Body)}
	if st.first = st.next(t); !strings.Contains(st.first, "event: hello") {
		t.Fatalf("first event %q", st.first)
	}
	return st
}

// rest reads st until it ends and returns what came; it fails if the
// stream is still open after within.
func (st *sseStream) rest(t *testing.T, within time.Duration) string {
	t.Helper()
	done := make(chan string, 1)
	go func() {
		b, _ := io.ReadAll(st.rd)
		done <- string(b)
	}()
	select {
	case s := <-done:
		return s
	case <-time.After(within):
		t.Fatalf("the stream is still open %v later", within)
		return ""
	}
}

// How a user loses access, and how its stream signed in.
var accessEnds = []struct {
	name string
	sign func(*streamUser) http.Header
	end  func(t *testing.T, db *store.DB, su *streamUser)
}{
	{"token, user disabled", (*streamUser).bearer, disableUser},
	{"session, user disabled", (*streamUser).cookie, disableUser},
	{"basic auth, user disabled", (*streamUser).basic, disableUser},
	{"session, signed out", (*streamUser).cookie, func(t *testing.T, db *store.DB, su *streamUser) {
		if err := db.EndSession(context.Background(), atoll.HashSecret(su.session), "10.0.0.1"); err != nil {
			t.Fatal(err)
		}
	}},
	{"token, revoked", (*streamUser).bearer, func(t *testing.T, db *store.DB, su *streamUser) {
		if _, err := db.RevokeToken(context.Background(), su.tokenID, "root", "10.0.0.1"); err != nil {
			t.Fatal(err)
		}
	}},
	{"token, user deleted", (*streamUser).bearer, func(t *testing.T, db *store.DB, su *streamUser) {
		if err := db.DeleteUser(context.Background(), su.user.ID, "root", "10.0.0.1"); err != nil {
			t.Fatal(err)
		}
	}},
	{"basic auth, new password", (*streamUser).basic, func(t *testing.T, db *store.DB, su *streamUser) {
		hash, _ := bcrypt.GenerateFromPassword([]byte("a new password"), bcrypt.MinCost)
		if err := db.Update(context.Background(), func(tx *store.Tx) error { return tx.SetUserPassword(su.user.ID, string(hash)) }); err != nil {
			t.Fatal(err)
		}
	}},
}

func disableUser(t *testing.T, db *store.DB, su *streamUser) {
	t.Helper()
	if err := db.SetUserDisabled(context.Background(), su.user.ID, true, "root", "10.0.0.1"); err != nil {
		t.Fatal(err)
	}
}

// A change stream open across the end of its user's access (disabled,
// deleted, signed out, token revoked, password changed) sends an `ended`
// event and closes at once; another user's stream goes on, and hears of
// the change without learning whose it was.
func TestSecurityDisableCutsChangeStream(t *testing.T) {
	changes := inmem.NewChanges()
	s := startLiveServer(t, func(s *web.Server) { s.DB.(*store.DB).Changes = changes; s.Changes = changes })
	bob := newStreamUser(t, s.DB, "bob")
	bystander := openChangesWith(t, s.URL, bob.bearer())
	for i, c := range accessEnds {
		t.Run(c.name, func(t *testing.T) {
			su := newStreamUser(t, s.DB, fmt.Sprintf("alice%d", i))
			st := openChangesWith(t, s.URL, c.sign(su))
			c.end(t, s.DB, su)
			rest := st.rest(t, promptly)
			if !strings.Contains(rest, "event: ended\ndata: ") {
				t.Errorf("the stream ended without an ended event: %q", rest)
			}
		})
	}
	// Bob's stream is still open: it heard of each user change, without
	// whose, and hears what comes next.
	changes.Publish(atoll.Change{Topic: atoll.TopicLock})
	users := 0
	for c := bystander.change(t); c.Topic != atoll.TopicLock; c = bystander.change(t) {
		if c.Topic == atoll.TopicUser {
			users++
		}
		if c.UserID != 0 {
			t.Fatalf("the stream names the user of %+v", c)
		}
	}
	if users < len(accessEnds) {
		t.Fatalf("bob's stream heard %d user changes; want at least %d", users, len(accessEnds))
	}
}

// Without a change from the store (a standby's copy, another process),
// the periodic check ends the stream.
func TestSecurityStreamRecheckWithoutChange(t *testing.T) {
	changes := inmem.NewChanges()
	s := startLiveServer(t, func(s *web.Server) {
		s.Changes = changes // the store publishes nothing
		web.SetStreamRecheck(s, 100*time.Millisecond)
	})
	su := newStreamUser(t, s.DB, "alice")
	st := openChangesWith(t, s.URL, su.cookie())
	disableUser(t, s.DB, su)
	if rest := st.rest(t, 5*time.Second); !strings.Contains(rest, "event: ended") {
		t.Errorf("the stream ended without an ended event: %q", rest)
	}
}

// A job log websocket open across the end of its user's access is closed
// with 1008 (policy violation) and a reason.
func TestSecurityDisableCutsJobWebsocket(t *testing.T) {
	changes := inmem.NewChanges()
	s := startLiveServer(t, func(s *web.Server) { s.DB.(*store.DB).Changes = changes; s.Changes = changes })
	job := runningJob(t, s.DB)
	for i, c := range accessEnds {
		t.Run(c.name, func(t *testing.T) {
			su := newStreamUser(t, s.DB, fmt.Sprintf("alice%d", i))
			seq := int64(i + 1)
			conn, _, err := websocket.DefaultDialer.Dial(fmt.Sprintf("ws://%s/jobs/%d/ws?from=%d", s.Addr(), job, seq), c.sign(su))
			if err != nil {
				t.Fatal(err)
			}
			defer conn.Close()
			// The stream is live: a line reaches it.
			runnerOf(s.Server).Hub.Publish(atoll.LogLine{JobID: job, Seq: seq, Stream: atoll.StreamStdout, Time: time.Now(), Text: "before"})
			conn.SetReadDeadline(time.Now().Add(5 * time.Second))
			if _, _, err := conn.ReadMessage(); err != nil {
				t.Fatalf("before the access ended: %v", err)
			}
			c.end(t, s.DB, su)
			conn.SetReadDeadline(time.Now().Add(promptly))
			_, msg, err := conn.ReadMessage()
			var ce *websocket.CloseError
			if !errors.As(err, &ce) || ce.Code != websocket.ClosePolicyViolation || ce.Text == "" {
				t.Fatalf("after the access ended: %q, %v; want a close 1008 with a reason", msg, err)
			}
		})
	}
}

// A token made before its user was disabled does not work once the user
// is enabled again; the password does.
func TestSecurityReenableRevivesNoToken(t *testing.T) {
	f := newAuthFixture(t, nil)
	admin := append(bearer(f.tokens[atoll.RoleAdmin]), "Content-Type", "application/x-www-form-urlencoded", "Accept", "text/html")
	op, err := f.db.UserByName(context.Background(), "operator-user")
	if err != nil {
		t.Fatal(err)
	}
	if res, body := f.do(t, "GET", "/api/v1/me", "", bearer(f.tokens[atoll.RoleOperator])...); res.StatusCode != 200 {
		t.Fatalf("the token before: %d %s", res.StatusCode, body)
	}
	for _, disabled := range []string{"true", "false"} {
		if res, _ := f.do(t, "POST", "/admin/users/"+strconv.FormatInt(op.ID, 10)+"/disable", "disabled="+disabled, admin...); res.StatusCode != http.StatusSeeOther {
			t.Fatalf("disabled=%s: %d", disabled, res.StatusCode)
		}
	}
	if res, body := f.do(t, "GET", "/api/v1/me", "", bearer(f.tokens[atoll.RoleOperator])...); res.StatusCode != http.StatusUnauthorized {
		t.Errorf("the token after disable and enable: %d %s; want 401", res.StatusCode, body)
	}
	toks, err := f.db.Tokens(context.Background())
	if err != nil {
		t.Fatal(err)
	}
	for _, tok := range toks {
		if tok.UserID == op.ID {
			t.Errorf("the admin page still lists %s's token %q", op.Name, tok.Name)
		}
	}
	if res, body := f.do(t, "GET", "/api/v1/me", "", "Authorization", basicAuth("operator-user", testPassword)); res.StatusCode != 200 {
		t.Errorf("the password after enabling: %d %s; want 200", res.StatusCode, body)
	}
}

// A session cookie from before its user was disabled does not sign in
// once the user is enabled again.
func TestSecurityReenableRevivesNoSession(t *testing.T) {
	f := newAuthFixture(t, nil)
	admin := append(bearer(f.tokens[atoll.RoleAdmin]), "Content-Type", "application/x-www-form-urlencoded", "Accept", "text/html")
	form := url.Values{"name": {"operator-user"}, "password": {testPassword}}.Encode()
	res, _ := f.do(t, "POST", "/login", form, "Content-Type", "application/x-www-form-urlencoded")
	c := sessionCookieOf(res)
	if c == nil || c.Value == "" {
		t.Fatalf("login: %d, no session cookie", res.StatusCode)
	}
	if res, body := f.do(t, "GET", "/api/v1/me", "", "Cookie", "atoll_session="+c.Value); res.StatusCode != 200 {
		t.Fatalf("the session before: %d %s", res.StatusCode, body)
	}
	op, err := f.db.UserByName(context.Background(), "operator-user")
	if err != nil {
		t.Fatal(err)
	}
	for _, disabled := range []string{"true", "false"} {
		if res, _ := f.do(t, "POST", "/admin/users/"+strconv.FormatInt(op.ID, 10)+"/disable", "disabled="+disabled, admin...); res.StatusCode != http.StatusSeeOther {
			t.Fatalf("disabled=%s: %d", disabled, res.StatusCode)
		}
	}
	if res, body := f.do(t, "GET", "/api/v1/me", "", "Cookie", "atoll_session="+c.Value); res.StatusCode != http.StatusUnauthorized {
		t.Errorf("the session after disable and enable: %d %s; want 401", res.StatusCode, body)
	}
}
