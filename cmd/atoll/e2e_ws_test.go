package main_test

import (
	"fmt"
	"strings"
	"testing"
	"time"

	"github.com/gorilla/websocket"

	"github.com/atollhq/atoll"
)

const chattyApply = `resource "terraform_data" "chatty" {
  input = "x"
  provisioner "local-exec" {
    command = "for i in 1 2 3 4 5; do echo tick-$i; sleep 0.2; done"
  }
}
`

// readLog reads a job's log over the websocket until the server closes it.
func readLog(t *testing.T, baseURL string, jobID, from int64) []atoll.LogLine {
	t.Helper()
	url := strings.Replace(baseURL, "http://", "ws://", 1) + fmt.Sprintf("/jobs/%d/ws?from=%d", jobID, from)
	conn, _, err := websocket.DefaultDialer.Dial(url, authHeader())
	if err != nil {
		t.Fatal(err)
	}
	defer conn.Close()
	conn.SetReadDeadline(time.Now().Add(60 * time.Second))
	var lines []atoll.LogLine
	for {
		var l atoll.LogLine
		err := conn.ReadJSON(&l)
		if websocket.IsCloseError(err, websocket.CloseNormalClosure) {
			return lines
		} else if err != nil {
			t.Fatalf("after %d lines: %v", len(lines), err)
		}
		lines = append(lines, l)
	}
}

func TestJobLogWebsocket(t *testing.T) {
	e := newE2E(t)
	e.open(1, "chatty", map[string]string{"staging/main.tf": chattyApply}, "staging/main.tf")
	e.waitComment(1, 1)
	e.comment(1, "atlantis apply")
	var running []atoll.Job
	eventually(t, 60*time.Second, "apply running", func() bool {
		getJSON(t, e.m.URL+"/api/v1/jobs?kind=apply", &running)
		return len(running) == 1 && running[0].State == atoll.JobRunning
	})
	// Connected while the job runs: stored lines, then live ones, in order.
	live := readLog(t, e.m.URL, running[0].ID, 1)
	text := ""
	for i, l := range live {
		if l.Seq != int64(i+1) {
			t.Fatalf("line %d has seq %d: lines must be contiguous from 1", i, l.Seq)
		}
		text += l.Text + "\n"
	}
	mustContain(t, "streamed log", text, "tick-1", "tick-5", "Apply complete!")
	if strings.Index(text, "tick-1") > strings.Index(text, "tick-5") {
		t.Fatal("lines out of order")
	}
	// After the end: the same log is replayed from the store, from any line.
	again := readLog(t, e.m.URL, running[0].ID, 3)
	if len(again) != len(live)-2 || again[0].Seq != 3 || again[len(again)-1].Text != live[len(live)-1].Text {
		t.Fatalf("replay from 3 = %d lines starting %d; live had %d", len(again), again[0].Seq, len(live))
	}
	var j atoll.Job
	getJSON(t, fmt.Sprintf("%s/api/v1/jobs/%d", e.m.URL, running[0].ID), &j)
	if j.State != atoll.JobSucceeded {
		t.Fatalf("apply job = %+v", j)
	}
	// Bad requests are answered before any upgrade.
	for _, path := range []string{"/jobs/999/ws", "/jobs/x/ws", fmt.Sprintf("/jobs/%d/ws?from=-1", j.ID)} {
		d := websocket.Dialer{HandshakeTimeout: 5 * time.Second}
		_, resp, err := d.Dial(strings.Replace(e.m.URL, "http://", "ws://", 1)+path, authHeader())
		if err == nil || resp == nil || (resp.StatusCode != 404 && resp.StatusCode != 400) {
			t.Fatalf("%s: err %v, response %v", path, err, resp)
		}
	}
}
