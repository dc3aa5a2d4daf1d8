package web_test

import (
	"bytes"
	"context"
	"crypto/hmac"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"io"
	"log/slog"
	"net/http"
	"sync"
	"testing"
	"time"

	"github.com/atollhq/atoll"
	"github.com/atollhq/atoll/runner"
	"github.com/atollhq/atoll/store"
	"github.com/atollhq/atoll/store/storetest"
	"github.com/atollhq/atoll/vcs"
	ghp "github.com/atollhq/atoll/vcs/github"
	"github.com/atollhq/atoll/web"
)

func decodeBody(t *testing.T, res *http.Response, v any) {
	t.Helper()
	defer res.Body.Close()
	b, err := io.ReadAll(res.Body)
	if err != nil {
		t.Fatal(err)
	}
	if err := json.Unmarshal(b, v); err != nil {
		t.Fatalf("%s: %v: %q", res.Request.URL.Path, err, b)
	}
}

const webhookSecret = "web-test-secret"

func sign(body []byte) string {
	mac := hmac.New(sha256.New, []byte(webhookSecret))
	mac.Write(body)
	return "sha256=" + hex.EncodeToString(mac.Sum(nil))
}

// logBuffer collects the server's log records as JSON lines.
type logBuffer struct {
	mu  sync.Mutex
	buf bytes.Buffer
}

func (l *logBuffer) Write(p []byte) (int, error) {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.buf.Write(p)
}

// records returns the logged records with the given message.
func (l *logBuffer) records(t *testing.T, msg string) []map[string]any {
	t.Helper()
	l.mu.Lock()
	defer l.mu.Unlock()
	var out []map[string]any
	dec := json.NewDecoder(bytes.NewReader(l.buf.Bytes()))
	for dec.More() {
		var rec map[string]any
		if err := dec.Decode(&rec); err != nil {
			t.Fatal(err)
		}
		if rec["msg"] == msg {
			out = append(out, rec)
		}
	}
	return out
}

// liveServer is a web.Server on a real listener on 127.0.0.1 with GitHub
// webhooks configured, a real database and an unstarted runner.
type liveServer struct {
	*web.Server
	DB   *store.DB // the Server's, for fixtures (Server.DB is an interface)
	URL  string
	logs *logBuffer
}

func startLiveServer(t testing.TB, configure func(*web.Server)) *liveServer {
	t.Helper()
	db := storetest.Open(t)
	gh, err := ghp.New(ghp.Config{Token: "t", WebhookSecret: webhookSecret, APIURL: "http://127.0.0.1:1/"})
	if err != nil {
		t.Fatal(err)
	}
	logs := &logBuffer{}
	s := &web.Server{DB: db, Logger: slog.New(slog.NewJSONHandler(logs, nil)), APISecret: liveSecret,
		Providers: map[string]vcs.Provider{atoll.VCSGitHub: gh}}
	withRunner(s, &runner.Runner{
		DB:        db,
		Hub:       runner.NewHub(),
		Providers: s.Providers,
		Config:    runner.Config{Allowlist: runner.ParseAllowlist("github.com/acme/*")},
	})
	if configure != nil {
		configure(s)
	}
	if err := s.Listen("127.0.0.1:0"); err != nil {
		t.Fatal(err)
	}
	done := make(chan error, 1)
	go func() { done <- s.Serve() }()
	t.Cleanup(func() {
		ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
		defer cancel()
		s.Shutdown(ctx)
		if err := <-done; err != nil {
			t.Errorf("Serve: %v", err)
		}
	})
	return &liveServer{Server: s, DB: db, URL: "http://" + s.Addr(), logs: logs}
}

// liveSecret is the --api-secret of startLiveServer's servers: an admin
// token for tests that call them over the network.
const liveSecret = "live-api-secret"

// operator is the user tests sign in by injecting it, as the auth
// middleware keeps a user already in the request's context.
var operator = &atoll.User{ID: 1002, Name: "alice", Role: atoll.RoleOperator, Source: "local"}

// asUser signs every request to h in as u (nil: nobody).
func asUser(h http.Handler, u *atoll.User) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if u != nil {
			r = r.WithContext(atoll.NewContextWithUser(r.Context(), u))
		}
		h.ServeHTTP(w, r)
	})
}

// liveAuth is the header that signs a client of startLiveServer in.
func liveAuth() http.Header { return http.Header{"Authorization": {"Bearer " + liveSecret}} }

// liveGet is http.Get signed in to a startLiveServer server.
func liveGet(client *http.Client, url string) (*http.Response, error) {
	req, err := http.NewRequest(http.MethodGet, url, nil)
	if err != nil {
		return nil, err
	}
	req.Header = liveAuth()
	return client.Do(req)
}

// withRunner has s run commands, stream live logs, ask for approvals and
// report unlocks through r, as cmd/atoll wires them, for the tests that go
// end to end through the real runner.
func withRunner(s *web.Server, r *runner.Runner) *runner.Runner {
	s.Commands, s.Unlocks, s.Approvals = r, r, r.PlanApproval
	if r.Hub != nil {
		s.Logs = r.Hub
	}
	return r
}

// runnerOf is the runner withRunner gave s.
func runnerOf(s *web.Server) *runner.Runner { return s.Commands.(*runner.Runner) }
