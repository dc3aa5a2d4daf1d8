package main_test

import (
	"bufio"
	"context"
	"database/sql"
	"encoding/json"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/atollhq/atoll"
	main "github.com/atollhq/atoll/cmd/atoll"
)

// Scheduled drift checks with the real clock: the server-side repo
// config's schedule fires every minute, and the scheduler looks every
// second (--drift-tick 1s), so a slot's check is queued within a second of
// the minute.

// everyMinute is a server-side repo config whose repositories are checked
// for drift every minute (on their default branch).
const everyMinute = `{"repos": [{"id": "/.*/", "drift_detection": {"enabled": true, "schedule": "* * * * *"}}]}`

// driftRequest is a drift request row, as stored.
type driftRequest struct {
	ID        int64
	State     string
	ClaimedBy string
	CreatedAt time.Time
}

// driftRequests lists the drift requests stored in db, oldest first.
func driftRequests(t testing.TB, db *sql.DB) []driftRequest {
	t.Helper()
	rows, err := db.Query(`SELECT id, state, claimed_by, created_at FROM requests WHERE kind = 'drift' ORDER BY id`)
	if err != nil {
		t.Fatal(err)
	}
	defer rows.Close()
	var out []driftRequest
	for rows.Next() {
		var r driftRequest
		var created int64
		if err := rows.Scan(&r.ID, &r.State, &r.ClaimedBy, &created); err != nil {
			t.Fatal(err)
		}
		r.CreatedAt = time.Unix(0, created).UTC()
		out = append(out, r)
	}
	if err := rows.Err(); err != nil {
		t.Fatal(err)
	}
	return out
}

// inSlot reports whether at falls in the minute slot starting at slot (a
// check is queued on the first tick at or after its slot).
func inSlot(at, slot time.Time) bool {
	return !at.Before(slot) && at.Before(slot.Add(time.Minute))
}

// The scheduler queues one check per minute slot, on the first tick of
// the slot, and moves the schedule to the next minute in the same commit.
func TestDriftScheduledCheck(t *testing.T) {
	start := time.Now()
	state := filepath.Join(t.TempDir(), "app.tfstate")
	e := newE2EWith(t, map[string]string{"app/main.tf": driftProject(state, "v1")}, func(c *main.Config) {
		c.RepoConfigJSON = everyMinute
		c.DriftTick = time.Second
	})
	ctx := context.Background()
	// Nothing is scheduled before Atoll knows the repository.
	time.Sleep(1500 * time.Millisecond)
	if s, err := e.m.DB.DriftSchedules(ctx); err != nil || len(s) != 0 {
		t.Fatalf("schedules before any webhook: %+v, %v", s, err)
	}
	// Not in a minute's last seconds: the first slot read below is then
	// still to come.
	if d := time.Until(time.Now().Truncate(time.Minute).Add(time.Minute)); d < 5*time.Second {
		time.Sleep(d + time.Second)
	}
	// A pull request makes the repository known (a README: no plan).
	e.open(1, "docs", map[string]string{"README.md": "docs\n"}, "README.md")
	var slot time.Time
	eventually(t, 30*time.Second, "the schedule stored", func() bool {
		s, err := e.m.DB.DriftSchedules(ctx)
		if err != nil || len(s) != 1 {
			return false
		}
		if s[0].Branch != "main" || s[0].Schedule != "* * * * *" {
			t.Fatalf("schedule %+v", *s[0])
		}
		slot = s[0].NextDueAt
		return true
	})
	if !slot.Equal(slot.Truncate(time.Minute)) || !slot.After(time.Now().Add(-2*time.Second)) || slot.After(time.Now().Add(time.Minute)) {
		t.Fatalf("first slot %v, now %v: want the next minute", slot, time.Now())
	}
	t.Logf("first slot %s, in %v", slot.Format(time.TimeOnly), time.Until(slot).Round(time.Millisecond))

	db, err := sql.Open("sqlite", "file:"+filepath.Join(e.dataDir, "atoll.db")+"?mode=ro")
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { db.Close() })
	if r := driftRequests(t, db); len(r) != 0 {
		t.Fatalf("drift requests before the first slot: %+v", r)
	}

	var drift []*atoll.DriftProject
	eventually(t, 75*time.Second, "the first scheduled check's drift state", func() bool {
		drift, err = e.m.DB.DriftProjects(ctx, atoll.DriftFilter{Repo: "acme/infra"})
		return err == nil && len(drift) == 1
	})
	checkedAt := time.Now()
	// Never applied: everything is to add.
	if d := drift[0]; d.State != atoll.DriftDrifted || d.Add != 1 || d.Dir != "app" || d.Branch != "main" || !inSlot(d.CheckedAt, slot) {
		t.Fatalf("the scheduled check: %+v (slot %v)", *d, slot)
	}
	eventually(t, 30*time.Second, "the drift request done", func() bool {
		r := driftRequests(t, db)
		return len(r) == 1 && r[0].State == atoll.RequestDone
	})
	// A few more ticks in the same slot queue nothing more.
	time.Sleep(3 * time.Second)
	reqs := driftRequests(t, db)
	if len(reqs) != 1 || !inSlot(reqs[0].CreatedAt, slot) || reqs[0].CreatedAt.Sub(slot) > 5*time.Second {
		t.Fatalf("drift requests %+v: want one, queued within a few ticks of the slot %v", reqs, slot)
	}
	if time.Now().After(slot.Add(time.Minute)) {
		t.Fatalf("the check ended after its slot: slot %v, now %v", slot, time.Now())
	}
	s, err := e.m.DB.DriftSchedules(ctx)
	if err != nil || len(s) != 1 || !s[0].NextDueAt.Equal(slot.Add(time.Minute)) {
		t.Fatalf("schedule after the check: %+v, %v; want next due %v", s, err, slot.Add(time.Minute))
	}
	jobs, err := e.m.DB.RequestJobs(ctx, reqs[0].ID)
	if err != nil || len(jobs) != 1 || jobs[0].Kind != atoll.JobPlan || jobs[0].State != atoll.JobSucceeded || !jobs[0].Spec.Drift {
		t.Fatalf("the scheduled check's jobs %+v, %v", jobs, err)
	}
	t.Logf("queued %v after the slot, drift state %v after it; test %v",
		reqs[0].CreatedAt.Sub(slot).Round(time.Millisecond), checkedAt.Sub(slot).Round(time.Millisecond), time.Since(start).Round(time.Second))
}

// driftDue is a "drift check due" line of a node's log.
type driftDue struct {
	Request int64  `json:"request"`
	Repo    string `json:"repo"`
}

// driftDues are the drift checks a node's log says it queued.
func driftDues(log string) []driftDue {
	var out []driftDue
	sc := bufio.NewScanner(strings.NewReader(log))
	sc.Buffer(make([]byte, 1<<20), 1<<20)
	for sc.Scan() {
		line := sc.Bytes()
		if !strings.Contains(string(line), `"drift check due"`) {
			continue
		}
		var d driftDue
		if json.Unmarshal(line, &d) == nil && d.Request > 0 {
			out = append(out, d)
		}
	}
	return out
}

// Failover between scheduled checks: the active is killed (-9) right after
// it queued a slot's check; the standby takes over and runs that check
// (no skip) without queueing another for the slot (no double run), then
// runs the next slot's once.
func TestDriftScheduleFailover(t *testing.T) {
	start := time.Now()
	state := filepath.Join(t.TempDir(), "app.tfstate")
	c := newHACluster(t, "s3", map[string]string{"app/main.tf": driftProject(state, "v1")})
	c.ExtraArgs = []string{"--repo-config-json", everyMinute, "--drift-tick", "1s"}
	a := startNode(t, c, "a")
	b := startNode(t, c, "b")
	active := waitActive(t, 30*time.Second, a, b)
	standby := b
	if active == b {
		standby = a
	}
	waitStandbyOf(t, 30*time.Second, standby, active)
	opened, _ := c.openPull(t, 1, "docs", map[string]string{"README.md": "docs\n"}, "README.md")
	mustSend(t, active.URL, opened)

	// The first slot's check, queued (and so replicated) by the active.
	var first driftDue
	eventually(t, 75*time.Second, "the active queueing the first slot's check", func() bool {
		if d := driftDues(active.log()); len(d) > 0 {
			first = d[0]
			return true
		}
		return false
	})
	queuedAt := time.Now()
	active.kill9(t)
	killed := time.Now()
	slot1 := queuedAt.Truncate(time.Minute)
	t.Logf("request %d queued by %s for slot %s; killed %v later", first.Request, active.ID, slot1.Format(time.TimeOnly), killed.Sub(queuedAt).Round(time.Millisecond))

	promoted := waitActive(t, 30*time.Second, standby)
	t.Logf("%s active %v after the kill", promoted.ID, time.Since(killed).Round(time.Millisecond))

	// The next slot's check, queued by the new active.
	var second driftDue
	eventually(t, 90*time.Second, "the new active queueing the next slot's check", func() bool {
		d := driftDues(promoted.log())
		for _, x := range d {
			if x.Request == first.Request {
				t.Fatalf("%s queued request %d too", promoted.ID, x.Request)
			}
		}
		if len(d) > 0 {
			second = d[0]
			return true
		}
		return false
	})
	if len(driftDues(promoted.log())) != 1 {
		t.Fatalf("%s queued %+v", promoted.ID, driftDues(promoted.log()))
	}
	slot2 := slot1.Add(time.Minute)

	// Both done, in the replica: one check per slot, both run by the new
	// active.
	var reqs []driftRequest
	var db *sql.DB
	eventually(t, 60*time.Second, "both checks done in the replica", func() bool {
		db = c.restore(t)
		reqs = driftRequests(t, db)
		return len(reqs) == 2 && reqs[0].State == atoll.RequestDone && reqs[1].State == atoll.RequestDone
	})
	if reqs[0].ID != first.Request || reqs[1].ID != second.Request {
		t.Fatalf("drift requests %+v; want %d then %d", reqs, first.Request, second.Request)
	}
	if !inSlot(reqs[0].CreatedAt, slot1) || !inSlot(reqs[1].CreatedAt, slot2) {
		t.Fatalf("drift requests %+v; want one in slot %v and one in slot %v", reqs, slot1, slot2)
	}
	for _, r := range reqs {
		if r.ClaimedBy != promoted.ID {
			t.Errorf("request %d ran on %q, want %s", r.ID, r.ClaimedBy, promoted.ID)
		}
		// Its project checked once: one plan succeeded, one check recorded.
		ok := queryInt(t, db, `SELECT COUNT(*) FROM jobs WHERE request_id = ? AND kind = 'plan' AND state = 'succeeded'`, r.ID)
		checks := queryInt(t, db, `SELECT COUNT(*) FROM drift_checks d JOIN jobs j ON j.id = d.job_id WHERE j.request_id = ?`, r.ID)
		all := queryInt(t, db, `SELECT COUNT(*) FROM jobs WHERE request_id = ?`, r.ID)
		if ok != 1 || checks != 1 {
			t.Errorf("request %d: %d plans succeeded, %d checks recorded (of %d jobs); want 1 and 1", r.ID, ok, checks, all)
		}
	}
	next := time.Unix(0, queryInt(t, db, `SELECT next_due_at FROM drift_schedules`)).UTC()
	if !next.Equal(slot2.Add(time.Minute)) {
		t.Errorf("next due %v, want %v", next, slot2.Add(time.Minute))
	}
	if n := queryInt(t, db, `SELECT COUNT(*) FROM drift_projects WHERE state = 'drifted' AND to_add = 1`); n != 1 {
		t.Errorf("%d drifted projects, want 1", n)
	}
	t.Logf("test %v", time.Since(start).Round(time.Second))
}
