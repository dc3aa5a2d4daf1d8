package web_test

import (
	"context"
	"encoding/json"
	"fmt"
	"io"
	"log/slog"
	"net/http"
	"reflect"
	"strings"
	"testing"
	"time"

	"github.com/gorilla/websocket"

	"github.com/atollhq/atoll"
	"github.com/atollhq/atoll/mock"
	"github.com/atollhq/atoll/web"
)

// withCommands serves f's database with cmds as the command service, in
// place of the fixture's runner.
func (f *pullFixture) withCommands(cmds atoll.CommandService) {
	s := &web.Server{DB: f.db, Logger: slog.New(slog.NewTextHandler(io.Discard, nil)), Commands: cmds}
	f.h = s.Handler()
}

// queueFor stores a real queued request for s, as the command service
// would, so that the page can show its notice; it returns its id.
func (f *pullFixture) queueFor(t *testing.T, s atoll.CommandSubmission, comment string) int64 {
	t.Helper()
	q := &atoll.Request{Kind: atoll.RequestComment, Comment: comment, User: s.User, Source: s.Source}
	ok, err := f.db.Intake(context.Background(), atoll.Intake{Repo: s.Repo, Kind: atoll.VCSEventComment, Pull: atoll.Pull{Number: s.Pull.Number}, Sender: s.User, Request: q})
	if err != nil || !ok {
		t.Fatalf("intake: %v, %v", ok, err)
	}
	return q.ID
}

// The Plan and Apply buttons hand the command service a structured
// command: the project selected by its stored name (or dir and
// workspace), as the signed-in user, from the dashboard and the client's
// address. Web writes no comment: it shows the one the service wrote.
func TestPullCommandSubmitsStructuredCommand(t *testing.T) {
	for _, tc := range []struct {
		name, body, ct string
		want           atoll.Command
	}{
		{"plan all", "command=plan", formType, atoll.Command{Name: "plan"}},
		{"apply named project", `{"command":"apply","project":"ready"}`, jsonType, atoll.Command{Name: "apply", Project: "ready"}},
		{"dir, default workspace", "command=plan&dir=stale", formType, atoll.Command{Name: "plan", Dir: "stale", Workspace: "default"}},
		{"dir and workspace", `{"command":"apply","dir":"planning","workspace":"staging"}`, jsonType,
			atoll.Command{Name: "apply", Dir: "planning", Workspace: "staging"}},
		// The stored name, whatever it holds: quoting is the grammar's.
		{"name to quote", `{"command":"plan","project":"o'brien"}`, jsonType, atoll.Command{Name: "plan", Project: "o'brien"}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			f := newPullFixture(t)
			var got []atoll.CommandSubmission
			f.withCommands(&mock.CommandService{SubmitFn: func(_ context.Context, s atoll.CommandSubmission) (atoll.Submitted, error) {
				got = append(got, s)
				return atoll.Submitted{RequestID: f.queueFor(t, s, "written by the service"), Comment: "written by the service"}, nil
			}})
			rec := f.do(t, "POST", commandsPath, tc.ct, tc.body, alice, "Accept", "application/json")
			if rec.Code != http.StatusOK {
				t.Fatalf("status %d: %s", rec.Code, rec.Body)
			}
			if len(got) != 1 {
				t.Fatalf("%d submissions, want 1", len(got))
			}
			s := got[0]
			if !reflect.DeepEqual(s.Command, tc.want) {
				t.Errorf("command = %+v, want %+v", s.Command, tc.want)
			}
			if s.User != "alice" || s.Via != atoll.ViaDashboard || s.Source != "192.0.2.1" {
				t.Errorf("user %q via %q source %q; want alice from the dashboard at 192.0.2.1", s.User, s.Via, s.Source)
			}
			if s.Repo.FullName() != "acme/infra" || s.Repo.VCS != atoll.VCSLocal || s.Pull.Number != 7 || s.Pull.ID != f.pullID {
				t.Errorf("submitted on %s (%s) #%d (id %d); want acme/infra #7", s.Repo.FullName(), s.Repo.VCS, s.Pull.Number, s.Pull.ID)
			}
			var out struct {
				Comment string `json:"comment"`
			}
			if err := json.Unmarshal(rec.Body.Bytes(), &out); err != nil || out.Comment != "written by the service" {
				t.Errorf("answer's comment = %q, %v; want the service's", out.Comment, err)
			}
		})
	}
}

// A command the service refuses as invalid (its comment would not read
// back as the project) is told as a project the comment cannot name.
func TestPullCommandServiceRefusal(t *testing.T) {
	f := newPullFixture(t)
	f.withCommands(&mock.CommandService{SubmitFn: func(context.Context, atoll.CommandSubmission) (atoll.Submitted, error) {
		return atoll.Submitted{}, atoll.Errorf(atoll.EINVALID, "```\nError: invalid -p/--project\n```")
	}})
	rec := f.do(t, "POST", commandsPath, jsonType, `{"command":"plan","project":"has space"}`, alice, "Accept", "application/json")
	if rec.Code != http.StatusBadRequest || !strings.Contains(rec.Body.String(), "cannot be named in a comment") {
		t.Fatalf("refusal = %d %s", rec.Code, rec.Body)
	}
}

// The API's plan submits one structured command per project and path,
// checking all of them before queuing any, as the caller (the token's
// user) from the API.
func TestAPIPlanSubmitsStructuredCommands(t *testing.T) {
	f := newPullFixture(t)
	var checked []atoll.Command
	var submitted []atoll.CommandSubmission
	cmds := &mock.CommandService{
		CheckFn: func(c atoll.Command) error {
			checked = append(checked, c)
			return nil
		},
		SubmitFn: func(_ context.Context, s atoll.CommandSubmission) (atoll.Submitted, error) {
			submitted = append(submitted, s)
			// Refused: the handler answers at once instead of waiting for
			// the work, and queues nothing after it.
			return atoll.Submitted{}, atoll.Errorf(atoll.EFORBIDDEN, "Repository not allowed.")
		},
	}
	f.withCommands(cmds)
	body := `{"Repository":"acme/infra","PR":7,"Projects":["ready"],"Paths":[{"Directory":"planning","Workspace":"staging"},{"Directory":"stale"}]}`
	rec := f.do(t, "POST", "/api/v1/plan", jsonType, body, alice)
	if rec.Code != http.StatusForbidden {
		t.Fatalf("status %d: %s", rec.Code, rec.Body)
	}
	want := []atoll.Command{
		{Name: "plan", Project: "ready"},
		{Name: "plan", Dir: "planning", Workspace: "staging"},
		{Name: "plan", Dir: "stale"},
	}
	if !reflect.DeepEqual(checked, want) {
		t.Errorf("checked %+v, want %+v", checked, want)
	}
	if len(submitted) != 1 {
		t.Fatalf("%d submissions after a refusal, want 1", len(submitted))
	}
	s := submitted[0]
	if !reflect.DeepEqual(s.Command, want[0]) || s.User != "alice" || s.Via != atoll.ViaAPI || s.Source != "192.0.2.1" ||
		s.Repo.FullName() != "acme/infra" || s.Pull.Number != 7 {
		t.Errorf("submitted %+v; want the first project's plan by alice from the API at 192.0.2.1 on acme/infra #7", s)
	}

	// One wrong selection refuses them all, with the service's reason.
	checked, submitted = nil, nil
	cmds.CheckFn = func(c atoll.Command) error {
		checked = append(checked, c)
		if c.Dir == "../x" {
			return atoll.Errorf(atoll.EINVALID, "invalid -d/--dir")
		}
		return nil
	}
	rec = f.do(t, "POST", "/api/v1/plan", jsonType, `{"Repository":"acme/infra","PR":7,"Paths":[{"Directory":"stale"},{"Directory":"../x"}]}`, alice)
	if rec.Code != http.StatusBadRequest || !strings.Contains(rec.Body.String(), "invalid -d/--dir") {
		t.Errorf("invalid path = %d %s", rec.Code, rec.Body)
	}
	if len(checked) != 2 || len(submitted) != 0 {
		t.Errorf("checked %d, submitted %d; want 2 checked and none submitted", len(checked), len(submitted))
	}

	// No selection is every project; an empty name is not.
	checked = nil
	cmds.CheckFn = func(c atoll.Command) error { checked = append(checked, c); return nil }
	f.do(t, "POST", "/api/apply", jsonType, `{"Repository":"acme/infra","PR":7}`, alice)
	if !reflect.DeepEqual(checked, []atoll.Command{{Name: "apply"}}) {
		t.Errorf("no selection checked %+v, want one apply of every project", checked)
	}
	checked = nil
	rec = f.do(t, "POST", "/api/v1/plan", jsonType, `{"Repository":"acme/infra","PR":7,"Projects":[""]}`, alice)
	if rec.Code != http.StatusBadRequest || len(checked) != 0 {
		t.Errorf("empty project name = %d %s, %d checked; want 400 and nothing checked", rec.Code, rec.Body, len(checked))
	}
}

// Locks released from the dashboard are reported through the service,
// by whom and from where; web posts no comment itself.
func TestUnlockReportedThroughService(t *testing.T) {
	f := newPullFixture(t)
	var told []string
	var by, via string
	s := &web.Server{DB: f.db, Logger: slog.New(slog.NewTextHandler(io.Discard, nil)),
		Unlocks: &mock.UnlockReporter{ReportUnlockedFn: func(_ context.Context, locks []*atoll.Lock, user, from string) []string {
			for _, l := range locks {
				told = append(told, l.Dir)
			}
			by, via = user, from
			return []string{"acme/infra#7"}
		}}}
	f.h = s.Handler()
	rec := f.do(t, "POST", "/locks/unlock", jsonType, `{"ids":[`+itoa(f.locks["ready"])+`],"confirm":true}`, alice)
	if rec.Code != http.StatusOK {
		t.Fatalf("unlock = %d %s", rec.Code, rec.Body)
	}
	if !reflect.DeepEqual(told, []string{"ready"}) || by != "alice" || via != "the dashboard" {
		t.Errorf("reported %v by %q via %q; want [ready] by alice via the dashboard", told, by, via)
	}
	if !strings.Contains(rec.Body.String(), "Could not comment on acme/infra#7") {
		t.Errorf("the answer does not say which pull request was not told: %s", rec.Body)
	}
}

// Whether a plan needs an approval is the policy's answer to the plan's
// repository, project and dir, as the API reports it.
func TestApprovalRequiredAsksThePolicy(t *testing.T) {
	f := newApprovalFixture(t)
	for _, required := range []bool{true, false} {
		var asked [][3]string
		f.s.Approvals = &mock.ApprovalPolicy{RequiresFn: func(repo, project, dir string) bool {
			asked = append(asked, [3]string{repo, project, dir})
			return required
		}}
		rec := f.serve(viewerU, "GET", "/api/v1/plans/"+itoa(f.planID)+"/approvals", "")
		var got struct {
			Required bool `json:"required"`
		}
		if err := json.Unmarshal(rec.Body.Bytes(), &got); err != nil || got.Required != required {
			t.Fatalf("required = %v (%v), want %v: %s", got.Required, err, required, rec.Body)
		}
		if len(asked) == 0 || asked[0] != [3]string{"acme/infra", "production", "production"} {
			t.Errorf("policy asked %v; want acme/infra, production, production", asked)
		}
	}
	// Without a policy (no --plan-approval), nothing is required.
	f.s.Approvals = nil
	rec := f.serve(viewerU, "GET", "/api/v1/plans/"+itoa(f.planID)+"/approvals", "")
	if !strings.Contains(rec.Body.String(), `"required": false`) {
		t.Errorf("no policy: %s", rec.Body)
	}
}

// The job log websocket subscribes to the job's live lines in the log
// stream, sends what arrives and closes normally when the stream ends.
func TestJobWebsocketReadsTheLogStream(t *testing.T) {
	lines := make(chan atoll.LogLine, 1)
	subscribed := make(chan int64, 1)
	s := startLiveServer(t, func(s *web.Server) {
		s.Logs = &mock.LogStream{SubscribeFn: func(jobID int64) (<-chan atoll.LogLine, func()) {
			subscribed <- jobID
			return lines, func() {}
		}}
	})
	job := runningJob(t, s.DB)
	conn, _, err := websocket.DefaultDialer.Dial(fmt.Sprintf("ws://%s/jobs/%d/ws", s.Addr(), job), liveAuth())
	if err != nil {
		t.Fatal(err)
	}
	defer conn.Close()
	conn.SetReadDeadline(time.Now().Add(20 * time.Second))
	if got := <-subscribed; got != job {
		t.Fatalf("subscribed to job %d, want %d", got, job)
	}
	lines <- atoll.LogLine{JobID: job, Seq: 1, Stream: atoll.StreamStdout, Time: time.Now(), Text: "from the stream"}
	var l atoll.LogLine
	if err := conn.ReadJSON(&l); err != nil || l.Seq != 1 || l.Text != "from the stream" {
		t.Fatalf("read %+v, %v; want the stream's line", l, err)
	}
	close(lines)
	if _, _, err := conn.ReadMessage(); !websocket.IsCloseError(err, websocket.CloseNormalClosure) {
		t.Fatalf("after the stream ended: %v; want a normal closure", err)
	}
}
