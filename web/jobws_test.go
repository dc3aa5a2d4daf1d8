package web_test

import (
	"context"
	"fmt"
	"net/http"
	"strings"
	"testing"
	"time"

	"github.com/coder/websocket"
	"github.com/coder/websocket/wsjson"

	"github.com/atollhq/atoll"
	"github.com/atollhq/atoll/store"
	"github.com/atollhq/atoll/web"
)

// runningJob records a started plan job and returns its id.
func runningJob(t *testing.T, db *store.DB) int64 {
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
	ctx, cancel := context.WithTimeout(context.Background(), 20*time.Second)
	defer cancel()
	conn, _, err := websocket.Dial(ctx, fmt.Sprintf("ws://%s/jobs/%d/ws", s.Addr(), job),
		&websocket.DialOptions{HTTPHeader: http.Header{"Authorization": {"Bearer " + liveSecret}}})
	if err != nil {
		t.Fatal(err)
	}
	defer conn.CloseNow()

	for seq := int64(1); seq <= 2; seq++ {
		time.Sleep(time.Second) // three times the timeouts
		s.Runner.Hub.Publish(atoll.LogLine{JobID: job, Seq: seq, Stream: atoll.StreamStdout, Time: time.Now(), Text: fmt.Sprintf("line %d", seq)})
		var l atoll.LogLine
		if err := wsjson.Read(ctx, conn, &l); err != nil {
			t.Fatalf("line %d, %d s after connecting: %v", seq, seq, err)
		}
		if l.Seq != seq || !strings.Contains(l.Text, "line") {
			t.Fatalf("got %+v; want line %d", l, seq)
		}
	}
	s.Runner.Hub.End(job)
	if _, _, err := conn.Read(ctx); websocket.CloseStatus(err) != websocket.StatusNormalClosure {
		t.Fatalf("after the job ended: %v; want a normal closure", err)
	}
}
