package web_test

import (
	"context"
	"encoding/json"
	"fmt"
	"net/http"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/gorilla/websocket"

	"github.com/atollhq/atoll"
	"github.com/atollhq/atoll/store"
	"github.com/atollhq/atoll/web"
)

// runningJob records a started plan job and returns its id.
func runningJob(t testing.TB, db *store.DB) int64 {
	t.Helper()
	var id int64
	err := db.Update(context.Background(), func(tx *store.Tx) error {
		repoID, err := tx.UpsertRepo(atoll.Repo{VCS: atoll.VCSGitHub, Host: "github.com", Owner: "acme", Name: "infra"})
		if err != nil {
			return err
		}
		pullID, err := tx.UpsertPull(repoID, atoll.Pull{Number: 1, HeadSHA: "abc", HeadRef: "f", BaseRef: "main"})
		if err != nil {
			return err
		}
		projectID, err := tx.UpsertProject(repoID, atoll.Project{Dir: ".", Workspace: "default"})
		if err != nil {
			return err
		}
		j := &atoll.Job{Kind: atoll.JobPlan, PullID: pullID, ProjectID: projectID, HeadSHA: "abc", User: "alice"}
		if err := tx.InsertJob(j); err != nil {
			return err
		}
		id = j.ID
		return tx.StartJob(j.ID)
	})
	if err != nil {
		t.Fatal(err)
	}
	return id
}

// The job log websocket lives as long as the job, well past the server's
// read and write timeouts, which it lifts for itself.
func TestJobWebsocketOutlivesServerTimeouts(t *testing.T) {
	s := startLiveServer(t, func(s *web.Server) {
		s.ReadTimeout, s.WriteTimeout = 300*time.Millisecond, 300*time.Millisecond
	})
	job := runningJob(t, s.DB)
	conn, _, err := websocket.DefaultDialer.Dial(fmt.Sprintf("ws://%s/jobs/%d/ws", s.Addr(), job), liveAuth())
	if err != nil {
		t.Fatal(err)
	}
	defer conn.Close()
	conn.SetReadDeadline(time.Now().Add(20 * time.Second))

	for seq := int64(1); seq <= 2; seq++ {
		time.Sleep(time.Second) // three times the timeouts
		runnerOf(s.Server).Hub.Publish(atoll.LogLine{JobID: job, Seq: seq, Stream: atoll.StreamStdout, Time: time.Now(), Text: fmt.Sprintf("line %d", seq)})
		var l atoll.LogLine
		if err := conn.ReadJSON(&l); err != nil {
			t.Fatalf("line %d, %d s after connecting: %v", seq, seq, err)
		}
		if l.Seq != seq || !strings.Contains(l.Text, "line") {
			t.Fatalf("got %+v; want line %d", l, seq)
		}
	}
	runnerOf(s.Server).Hub.End(job)
	if _, _, err := conn.ReadMessage(); !websocket.IsCloseError(err, websocket.CloseNormalClosure) {
		t.Fatalf("after the job ended: %v; want a normal closure", err)
	}
}

// wsURL is the job log websocket of job from line from.
func wsURL(s *liveServer, job, from int64) string {
	return fmt.Sprintf("ws://%s/jobs/%d/ws?from=%d", s.Addr(), job, from)
}

// A viewer that disconnects and reconnects with from = its last line + 1
// gets exactly the lines it lacks, while the job goes on writing: no gap,
// no duplicate. Lines are published and stored as the runner's log sink
// does (published at once, stored in batches a little later).
func TestJobWebsocketResume(t *testing.T) {
	for _, query := range []string{"", "&batch=1"} {
		t.Run("query="+query, func(t *testing.T) { testJobWebsocketResume(t, query) })
	}
}

func testJobWebsocketResume(t *testing.T, query string) {
	s := startLiveServer(t, nil)
	job := runningJob(t, s.DB)
	const total = 600
	ctx := context.Background()
	var wg sync.WaitGroup
	wg.Add(1)
	go func() {
		defer wg.Done()
		var pending []atoll.LogLine
		for seq := int64(1); seq <= total; seq++ {
			l := atoll.LogLine{JobID: job, Seq: seq, Stream: atoll.StreamStdout, Time: time.Now(), Text: fmt.Sprintf("line %d", seq)}
			runnerOf(s.Server).Hub.Publish(l)
			pending = append(pending, l)
			if len(pending) == 25 {
				if err := s.DB.AppendLogs(ctx, pending); err != nil {
					t.Error(err)
					return
				}
				pending = nil
			}
			time.Sleep(time.Millisecond)
		}
		if err := s.DB.AppendLogs(ctx, pending); err != nil {
			t.Error(err)
		}
		if err := s.DB.Update(ctx, func(tx *store.Tx) error { return tx.FinishJob(job, atoll.JobSucceeded, "", nil) }); err != nil {
			t.Error(err)
		}
		runnerOf(s.Server).Hub.End(job)
	}()
	defer wg.Wait()

	var got []atoll.LogLine
	read := func(conn *websocket.Conn, n int) error {
		conn.SetReadDeadline(time.Now().Add(30 * time.Second))
		for i := 0; n < 0 || i < n; {
			_, msg, err := conn.ReadMessage()
			if err != nil {
				return err
			}
			var lines []atoll.LogLine
			if query != "" {
				err = json.Unmarshal(msg, &lines) // batches: always arrays
			} else {
				lines = []atoll.LogLine{{}}
				err = json.Unmarshal(msg, &lines[0])
			}
			if err != nil {
				return fmt.Errorf("message %q: %w", msg, err)
			}
			got = append(got, lines...)
			i += len(lines)
		}
		return nil
	}
	from := int64(1)
	for _, n := range []int{40, 150} { // two disconnections mid-stream
		conn, _, err := websocket.DefaultDialer.Dial(wsURL(s, job, from)+query, liveAuth())
		if err != nil {
			t.Fatal(err)
		}
		if err := read(conn, n); err != nil {
			t.Fatal(err)
		}
		conn.Close()
		from = got[len(got)-1].Seq + 1
		time.Sleep(20 * time.Millisecond) // lines go by while disconnected
	}
	conn, _, err := websocket.DefaultDialer.Dial(wsURL(s, job, from)+query, liveAuth())
	if err != nil {
		t.Fatal(err)
	}
	defer conn.Close()
	if err := read(conn, -1); !websocket.IsCloseError(err, websocket.CloseNormalClosure) {
		t.Fatalf("after %d lines: %v; want a normal closure once the job ended", len(got), err)
	}
	if len(got) != total {
		t.Errorf("received %d lines over three connections; want %d", len(got), total)
	}
	for i, l := range got {
		if l.Seq != int64(i+1) || l.Text != fmt.Sprintf("line %d", i+1) {
			t.Fatalf("line %d is %+v: a gap or a duplicate", i+1, l)
		}
	}
}

// Bad requests are answered before any upgrade.
func TestJobWebsocketBadRequests(t *testing.T) {
	s := startLiveServer(t, nil)
	job := runningJob(t, s.DB)
	for path, want := range map[string]int{"/jobs/999/ws": 404, "/jobs/x/ws": 400, fmt.Sprintf("/jobs/%d/ws?from=0", job): 400} {
		_, res, err := websocket.DefaultDialer.Dial("ws://"+s.Addr()+path, liveAuth())
		if err == nil || res == nil || res.StatusCode != want {
			t.Errorf("%s: err %v, response %v; want %d", path, err, res, want)
		}
	}
	// Another site's page may not read a log with the user's cookies.
	_, res, err := websocket.DefaultDialer.Dial(wsURL(s, job, 1), http.Header{"Origin": {"https://evil.example"}, "Authorization": liveAuth()["Authorization"]})
	if err == nil || res == nil || res.StatusCode != http.StatusForbidden {
		t.Errorf("cross-origin: err %v, response %v; want 403", err, res)
	}
}
