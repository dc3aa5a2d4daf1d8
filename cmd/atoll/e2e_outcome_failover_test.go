package main_test

import (
	"fmt"
	"math/rand/v2"
	"os"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"
)

// Every pull request whose opened webhook was acknowledged gets an outcome
// on the pull request (a plan, an error, or "interrupted"), across kill -9
// failovers of the active at random moments under a stream of such
// webhooks, sent alternately to both nodes (issue 21). The kills are 1-3.5 s
// apart, so requests are caught in every phase: queued, claimed, checking
// out, planning, reporting. ATOLL_TEST_OUTCOME_KILLS sets how many (3).
// A lost outcome is reported with its request's and jobs' rows in the
// replica.
func TestFailoverAcknowledgedOpenedPullsGetOutcome(t *testing.T) {
	kills := 3
	if s := os.Getenv("ATOLL_TEST_OUTCOME_KILLS"); s != "" {
		kills, _ = strconv.Atoi(s)
	}
	c := newHACluster(t, "s3", map[string]string{"README.md": "infra\n"})
	nodes := map[string]*haNode{"a": startNode(t, c, "a")}
	active := waitActive(t, 30*time.Second, nodes["a"])
	nodes["b"] = startNode(t, c, "b")
	waitStandbyOf(t, 10*time.Second, nodes["b"], active)

	// Branches made up front: the stream only sends, one every 150 ms.
	pulls := 40*kills + 60
	var mu sync.Mutex
	heads := map[int]string{}
	for n := 1; n <= pulls; n++ {
		dir := fmt.Sprintf("p%d", n)
		sha := c.Repo.branch("pr-"+dir, map[string]string{dir + "/main.tf": tfProject(dir, 1)})
		c.GH.setPull(n, fakePull{HeadSHA: sha, HeadRef: "pr-" + dir, BaseSHA: c.Base, BaseRef: "main", Files: []string{dir + "/main.tf"}})
		heads[n] = sha
	}
	urls := []string{nodes["a"].URL, nodes["b"].URL}
	stream := (&webhookStream{URLs: urls, Interval: 150 * time.Millisecond, Next: func(i int) (delivery, error) {
		n := min(i+1, pulls) // past the last, its redeliveries: no-ops
		mu.Lock()
		sha := heads[n]
		mu.Unlock()
		d, err := newDelivery("pull_request", "pull_request.opened.json", pullEvent(c.CloneURL, n, "opened", fmt.Sprintf("pr-p%d", n), sha, c.Base))
		d.Pull = n
		return d, err
	}}).start()
	for k := range kills {
		time.Sleep(time.Duration(1000+rand.IntN(2500)) * time.Millisecond)
		standby := nodes["a"]
		if active.ID == "a" {
			standby = nodes["b"]
		}
		killedAt := time.Now()
		active.kill9(t)
		next := waitActive(t, takeoverBound, standby)
		t.Logf("kill %d: %s killed, %s ready in %v", k+1, active.ID, next.ID, time.Since(killedAt).Round(time.Millisecond))
		nodes[active.ID] = startNode(t, c, active.ID)
		waitStandbyOf(t, 20*time.Second, nodes[active.ID], next)
		active = next
	}
	time.Sleep(time.Second)
	results := stream.finish(t)
	acked := 0
	for _, r := range results {
		if r.OK {
			acked++
		}
	}
	t.Logf("%d opened webhooks sent, %d acknowledged", len(results), acked)
	deadline := time.Now().Add(4 * time.Minute)
	var lost []int
	for {
		lost = lost[:0]
		for _, r := range results {
			if r.OK && len(c.GH.pullComments(r.D.Pull)) == 0 {
				lost = append(lost, r.D.Pull)
			}
		}
		if len(lost) == 0 || time.Now().After(deadline) {
			break
		}
		time.Sleep(500 * time.Millisecond)
	}
	if len(lost) > 0 {
		db := c.restore(t)
		for _, n := range lost {
			rows, err := db.Query(`SELECT q.id, q.state, q.claimed_by, q.error, q.created_at, q.started_at, q.finished_at FROM requests q JOIN pulls p ON p.id = q.pull_id WHERE p.number = ?`, n)
			if err != nil {
				t.Fatal(err)
			}
			var desc []string
			for rows.Next() {
				var id, created int64
				var state, by, msg string
				var started, finished any
				rows.Scan(&id, &state, &by, &msg, &created, &started, &finished)
				desc = append(desc, fmt.Sprintf("request %d %s by %q err %q created %d started %v finished %v", id, state, by, msg, created, started, finished))
			}
			rows.Close()
			var jobs []string
			jrows, _ := db.Query(`SELECT j.id, j.kind, j.state, j.error FROM jobs j JOIN pulls p ON p.id = j.pull_id WHERE p.number = ?`, n)
			for jrows != nil && jrows.Next() {
				var id int64
				var kind, state, msg string
				jrows.Scan(&id, &kind, &state, &msg)
				jobs = append(jobs, fmt.Sprintf("job %d %s %s %q", id, kind, state, msg))
			}
			if jrows != nil {
				jrows.Close()
			}
			t.Errorf("PR %d: acknowledged, no outcome on the pull request: %s; %s", n, strings.Join(desc, "; "), strings.Join(jobs, "; "))
		}
	}
}
