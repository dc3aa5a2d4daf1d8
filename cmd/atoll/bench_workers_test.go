package main_test

import (
	"bufio"
	"context"
	"database/sql"
	"encoding/json"
	"fmt"
	"net"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"sort"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/gorilla/websocket"

	"github.com/atollhq/atoll"
	main "github.com/atollhq/atoll/cmd/atoll"
)

// Worker pools: the figures of the issue. Everything runs on 127.0.0.1
// with real `atoll worker` processes and real Terraform; latencies compare
// timestamps of one machine clock.

// BenchmarkWorkerClaimLatency: one idle worker waits in its long-poll
// claim; one plan after another (each a new pull request changing its own
// project) is dispatched to it. claim is the dispatch's ClaimedAt −
// CreatedAt (the server's store clock); webhook-to-claimed is from the
// opened webhook's 200 to the worker's "job claimed" log line (its "time"),
// which also holds the runner's intake before the dispatch exists.
func BenchmarkWorkerClaimLatency(b *testing.B) {
	testEnv(b)
	terraformBin(b) // skips without Terraform
	n := b.N + 1    // pull 0 warms the worker up and is not measured
	files := map[string]string{}
	for i := 0; i < n; i++ {
		files[fmt.Sprintf("p%d/main.tf", i)] = tfProject("p", 1)
	}
	repo := newGitRepo(b, files)
	base := repo.git("rev-parse", "main")
	shas := make([]string, n)
	for i := range shas {
		shas[i] = repo.branch(fmt.Sprintf("b%d", i), map[string]string{fmt.Sprintf("p%d/main.tf", i): tfProject("p", 2)})
	}
	cloneURL, _ := serveGit(b, repo, "gh-test-token")
	gh := newFakeGitHub(b)
	m := startBenchMain(b, gh, "", func(c *main.Config) { c.RepoConfigJSON = workersRepoConfig(b, "gpu", "") })
	tokenFile, _ := workerToken(b, m, "gpu")
	w := startWorker(b, "w1", "gpu", tokenFile, m.URL)

	claim := make([]time.Duration, 0, b.N)
	outside := make([]time.Duration, 0, b.N)
	b.ResetTimer()
	for i := 0; i < n; i++ {
		pull := i + 1
		gh.setPull(pull, fakePull{HeadSHA: shas[i], HeadRef: fmt.Sprintf("b%d", i), BaseSHA: base, BaseRef: "main", Files: []string{fmt.Sprintf("p%d/main.tf", i)}})
		resp := webhook(b, m.URL, "pull_request", "pull_request.opened.json", webhookSecret, pullEvent(cloneURL, pull, "opened", fmt.Sprintf("b%d", i), shas[i], base))
		sent := time.Now()
		if resp.StatusCode != http.StatusOK {
			b.Fatalf("webhook %d: status %d", pull, resp.StatusCode)
		}
		eventually(b, 2*time.Minute, fmt.Sprintf("the plan comment on #%d", pull), func() bool { return len(gh.pullComments(pull)) > 0 })
		if c := gh.pullComments(pull)[0]; !contains(c, "Plan: 2 to add") {
			b.Fatalf("comment on #%d:\n%s", pull, c)
		}
		// The worker is back in its claim once it logged the job done.
		eventually(b, 30*time.Second, "the worker's job done", func() bool { return strings.Count(w.out.String(), `"job done"`) == pull })
		time.Sleep(100 * time.Millisecond)
		var jobs []atoll.Job
		getJSON(b, fmt.Sprintf("%s/api/v1/jobs?repo=acme/infra&pull=%d&kind=plan", m.URL, pull), &jobs)
		if len(jobs) != 1 || jobs[0].State != atoll.JobSucceeded {
			b.Fatalf("plan jobs of #%d: %+v", pull, jobs)
		}
		d, err := m.DB.Dispatch(context.Background(), jobs[0].ID)
		if err != nil {
			b.Fatal(err)
		}
		if d.State != atoll.DispatchDone || d.Attempt != 1 || d.ClaimedAt == nil {
			b.Fatalf("dispatch of job %d: %+v", jobs[0].ID, d)
		}
		if i == 0 {
			continue
		}
		claim = append(claim, d.ClaimedAt.Sub(d.CreatedAt))
		if at, ok := workerLogTime(w.out.String(), "job claimed", jobs[0].ID); ok {
			outside = append(outside, at.Sub(sent))
		}
	}
	b.StopTimer()
	reportMax(b, "claim", claim)
	if len(outside) == len(claim) {
		reportMax(b, "webhook-to-claimed", outside)
	} else {
		b.Logf("the worker's log had %d of %d \"job claimed\" lines: no outside figure", len(outside), len(claim))
	}
}

// workerLogTime is the time of the worker's JSON log line msg about job.
func workerLogTime(out, msg string, job int64) (time.Time, bool) {
	for _, line := range strings.Split(out, "\n") {
		var l struct {
			Time time.Time `json:"time"`
			Msg  string    `json:"msg"`
			Job  int64     `json:"job"`
		}
		if json.Unmarshal([]byte(line), &l) == nil && l.Msg == msg && l.Job == job {
			return l.Time, true
		}
	}
	return time.Time{}, false
}

// stampWorkflow's plan prints 40 lines, each its own time in nanoseconds,
// 50 ms apart, before it plans.
const stampScript = `for i in $(seq 40); do date +%s%N; sleep 0.05; done`

// BenchmarkWorkerLogToBrowser: a worker's plan prints timestamped lines;
// a websocket client on the job page's route (/jobs/{id}/ws?batch=1, as
// live.js opens it) connects as soon as the job exists. line is receive
// time − the line's timestamp, over every stamped line of b.N jobs.
func BenchmarkWorkerLogToBrowser(b *testing.B) {
	testEnv(b)
	terraformBin(b) // skips without Terraform
	files := map[string]string{}
	for i := 0; i < b.N; i++ {
		files[fmt.Sprintf("p%d/main.tf", i)] = tfProject("p", 1)
	}
	repo := newGitRepo(b, files)
	base := repo.git("rev-parse", "main")
	shas := make([]string, b.N)
	for i := range shas {
		shas[i] = repo.branch(fmt.Sprintf("b%d", i), map[string]string{fmt.Sprintf("p%d/main.tf", i): tfProject("p", 2)})
	}
	cloneURL, _ := serveGit(b, repo, "gh-test-token")
	gh := newFakeGitHub(b)
	cfg, _ := json.Marshal(map[string]any{
		"repos":     []any{map[string]any{"id": "/.*/", "execution_pool": "gpu", "workflow": "stamps"}},
		"workflows": map[string]any{"stamps": map[string]any{"plan": map[string]any{"steps": []any{"init", map[string]any{"run": stampScript}, "plan"}}}},
	})
	m := startBenchMain(b, gh, "", func(c *main.Config) { c.RepoConfigJSON = string(cfg) })
	tokenFile, _ := workerToken(b, m, "gpu")
	startWorker(b, "w1", "gpu", tokenFile, m.URL)

	var lat []time.Duration
	b.ResetTimer()
	for i := 0; i < b.N; i++ {
		pull := i + 1
		gh.setPull(pull, fakePull{HeadSHA: shas[i], HeadRef: fmt.Sprintf("b%d", i), BaseSHA: base, BaseRef: "main", Files: []string{fmt.Sprintf("p%d/main.tf", i)}})
		webhook(b, m.URL, "pull_request", "pull_request.opened.json", webhookSecret, pullEvent(cloneURL, pull, "opened", fmt.Sprintf("b%d", i), shas[i], base))
		var jobs []atoll.Job
		deadline := time.Now().Add(time.Minute)
		for len(jobs) == 0 {
			if time.Now().After(deadline) {
				b.Fatalf("no plan job on #%d", pull)
			}
			time.Sleep(5 * time.Millisecond)
			getJSON(b, fmt.Sprintf("%s/api/v1/jobs?repo=acme/infra&pull=%d&kind=plan", m.URL, pull), &jobs)
		}
		got := watchStamps(b, m.URL, jobs[0].ID)
		if len(got) != 40 {
			b.Fatalf("job %d: %d stamped lines, want 40", jobs[0].ID, len(got))
		}
		lat = append(lat, got...)
		eventually(b, time.Minute, "the plan comment", func() bool { return len(gh.pullComments(pull)) > 0 })
	}
	b.StopTimer()
	reportMax(b, "line", lat)
}

// watchStamps reads job's log over the job page's websocket until the
// server closes it, and returns each stamped line's latency.
func watchStamps(b testing.TB, baseURL string, job int64) []time.Duration {
	url := strings.Replace(baseURL, "http://", "ws://", 1) + fmt.Sprintf("/jobs/%d/ws?batch=1&from=1", job)
	conn, _, err := websocket.DefaultDialer.Dial(url, authHeader())
	if err != nil {
		b.Fatal(err)
	}
	defer conn.Close()
	conn.SetReadDeadline(time.Now().Add(2 * time.Minute))
	var lat []time.Duration
	for {
		_, msg, err := conn.ReadMessage()
		now := time.Now()
		if websocket.IsCloseError(err, websocket.CloseNormalClosure) {
			return lat
		} else if err != nil {
			b.Fatalf("job %d's log: %v", job, err)
		}
		var lines []atoll.LogLine
		if err := json.Unmarshal(msg, &lines); err != nil {
			b.Fatalf("message %s: %v", msg, err)
		}
		for _, l := range lines {
			text := strings.TrimSpace(l.Text)
			if ns, err := strconv.ParseInt(text, 10, 64); err == nil && len(text) == 19 {
				lat = append(lat, now.Sub(time.Unix(0, ns)))
			}
		}
	}
}

// benchPlans is how many pull requests BenchmarkWorkerPoolPlans opens:
// ATOLL_BENCH_PLANS, 100 by default (the documented run).
func benchPlans(b testing.TB) int {
	if v := os.Getenv("ATOLL_BENCH_PLANS"); v != "" {
		n, err := strconv.Atoi(v)
		if err != nil || n < 1 {
			b.Fatalf("ATOLL_BENCH_PLANS=%q", v)
		}
		return n
	}
	return 100
}

// BenchmarkWorkerPoolPlans opens 100 pull requests at once, each changing
// its own project, against an `atoll server` process of its own, twice:
// "local" runs every plan on the server (no execution_pool), "workers"
// sends them to 3 `atoll worker` processes. Each must give 100 plan
// comments, one succeeded plan job per pull request, and through workers
// one dispatch per job (attempt 1, done). cpu-ms/plan is the server's
// CPU (its own and its reaped children's: git, Terraform) from the first
// webhook to the last comment, from /proc/PID/stat, divided by the plans.
func BenchmarkWorkerPoolPlans(b *testing.B) {
	testEnv(b)
	terraformBin(b) // skips without Terraform
	for iter := 0; iter < b.N; iter++ {
		local := poolRun(b, false)
		workers := poolRun(b, true)
		b.ReportMetric(local.wall.Seconds(), "local-wall-s")
		b.ReportMetric(workers.wall.Seconds(), "workers-wall-s")
		b.ReportMetric(local.cpuPerPlan(), "local-cpu-ms/plan")
		b.ReportMetric(workers.cpuPerPlan(), "workers-cpu-ms/plan")
		b.ReportMetric(local.selfPerPlan(), "local-self-cpu-ms/plan")
		b.ReportMetric(workers.selfPerPlan(), "workers-self-cpu-ms/plan")
		b.ReportMetric(100*workers.cpuPerPlan()/local.cpuPerPlan(), "workers/local-%")
		b.Logf("local: %d plans in %v, server CPU %v (self %v); workers: %d plans in %v, server CPU %v (self %v); whole processes (rusage): local %v, workers %v",
			local.plans, local.wall.Round(time.Millisecond), local.cpu, local.self, workers.plans, workers.wall.Round(time.Millisecond), workers.cpu, workers.self, local.rusage, workers.rusage)
	}
}

type poolResult struct {
	plans             int
	wall              time.Duration
	cpu, self, rusage time.Duration
}

func (r poolResult) cpuPerPlan() float64 {
	return float64(r.cpu.Microseconds()) / 1000 / float64(r.plans)
}
func (r poolResult) selfPerPlan() float64 {
	return float64(r.self.Microseconds()) / 1000 / float64(r.plans)
}

func poolRun(b *testing.B, viaWorkers bool) poolResult {
	pulls := benchPlans(b)
	repo, base, gh, shas := manyPulls(b, pulls, pulls)
	cloneURL, _ := serveGit(b, repo, "gh-test-token")
	var args []string
	if viaWorkers {
		args = []string{"--repo-config-json", workersRepoConfig(b, "gpu", ""), "--parallelism", "8"}
	}
	srv := startServerProc(b, gh, args...)
	if viaWorkers {
		tokenFile := adminWorkerToken(b, srv.URL, "gpu")
		for i := 1; i <= 3; i++ {
			w := startWorker(b, fmt.Sprintf("w%d", i), "gpu", tokenFile, srv.URL)
			eventually(b, 30*time.Second, "the worker started", func() bool { return strings.Contains(w.out.String(), "atoll worker started") })
		}
		time.Sleep(500 * time.Millisecond) // in their claims
	}
	bodies := make([][]byte, pulls)
	for i := range bodies {
		bodies[i] = webhookBody(b, "pull_request.opened.json", pullEvent(cloneURL, i+1, "opened", fmt.Sprintf("b%d", i), shas[i], base))
	}
	cpu0, self0 := procCPU(b, srv.cmd.Process.Pid)
	start := time.Now()
	b.StartTimer()
	for i := 0; i < pulls; i++ {
		if resp := postWebhook(b, srv.URL, "pull_request", bodies[i], sign(bodies[i], webhookSecret)); resp.StatusCode != http.StatusOK {
			b.Fatalf("webhook %d: status %d", i+1, resp.StatusCode)
		}
	}
	b.Logf("workers=%v: %d webhooks answered in %v", viaWorkers, pulls, time.Since(start).Round(time.Millisecond))
	done := 0
	for done < pulls {
		done = 0
		for i := 1; i <= pulls; i++ {
			if len(gh.pullComments(i)) > 0 {
				done++
			}
		}
		if time.Since(start) > 15*time.Minute {
			b.Fatalf("only %d of %d pull requests commented after 15 minutes:\n%s", done, pulls, srv.tail())
		}
		time.Sleep(5 * time.Millisecond)
	}
	r := poolResult{plans: pulls, wall: time.Since(start)}
	b.StopTimer()
	cpu1, self1 := procCPU(b, srv.cmd.Process.Pid)
	r.cpu, r.self = cpu1-cpu0, self1-self0

	// Every pull request planned, once.
	jobIDs := map[int64]int{}
	for i := 1; i <= pulls; i++ {
		if c := gh.pullComments(i); len(c) != 1 || !contains(c[0], "Plan: 2 to add") {
			b.Fatalf("#%d has %d comments, the first:\n%s", i, len(c), c[0])
		}
		var jobs []atoll.Job
		getJSON(b, fmt.Sprintf("%s/api/v1/jobs?repo=acme/infra&pull=%d&kind=plan", srv.URL, i), &jobs)
		if len(jobs) != 1 || jobs[0].State != atoll.JobSucceeded {
			b.Fatalf("plan jobs of #%d: %+v", i, jobs)
		}
		jobIDs[jobs[0].ID] = i
	}
	r.rusage = srv.stop(b)
	db, err := sql.Open("sqlite", filepath.Join(srv.DataDir, "atoll.db"))
	if err != nil {
		b.Fatal(err)
	}
	defer db.Close()
	rows, err := db.Query(`SELECT job_id, attempt, state, worker FROM dispatches`)
	if err != nil {
		b.Fatal(err)
	}
	defer rows.Close()
	dispatched := map[int64]bool{}
	perWorker := map[string]int{}
	for rows.Next() {
		var id int64
		var attempt int
		var state, worker string
		if err := rows.Scan(&id, &attempt, &state, &worker); err != nil {
			b.Fatal(err)
		}
		if _, ok := jobIDs[id]; !ok || attempt != 1 || state != atoll.DispatchDone || dispatched[id] {
			b.Fatalf("dispatch of job %d (pull #%d): attempt %d, state %s, worker %s", id, jobIDs[id], attempt, state, worker)
		}
		dispatched[id] = true
		perWorker[worker]++
	}
	if err := rows.Err(); err != nil {
		b.Fatal(err)
	}
	want := 0
	if viaWorkers {
		want = pulls
	}
	if len(dispatched) != want {
		b.Fatalf("%d dispatches for %d plan jobs, want %d", len(dispatched), pulls, want)
	}
	if viaWorkers {
		b.Logf("plans per worker: %v", perWorker)
	}
	return r
}

// adminWorkerToken makes a worker token of pool through /admin, as an
// operator's script would, and writes it to a file.
func adminWorkerToken(b testing.TB, url, pool string) string {
	req, _ := http.NewRequest(http.MethodPost, url+"/admin/worker-tokens", strings.NewReader("name=bench&pool="+pool))
	req.Header.Set("Content-Type", "application/x-www-form-urlencoded")
	req.Header.Set("Accept", "application/json")
	resp, err := haClient.Do(req)
	if err != nil {
		b.Fatal(err)
	}
	defer resp.Body.Close()
	var made struct{ Token string }
	json.NewDecoder(resp.Body).Decode(&made)
	if resp.StatusCode != http.StatusCreated || made.Token == "" {
		b.Fatalf("create worker token: %d", resp.StatusCode)
	}
	file := filepath.Join(b.TempDir(), "token")
	if err := os.WriteFile(file, []byte(made.Token), 0o600); err != nil {
		b.Fatal(err)
	}
	return file
}

// serverProc is an `atoll server` process without a replica.
type serverProc struct {
	URL, DataDir string
	cmd          *exec.Cmd
	log          *lockedBuffer
	done         chan struct{}
}

// startServerProc starts `atoll server` on a free port against gh, with
// extra flags, and returns once it answers /healthz.
func startServerProc(b testing.TB, gh *fakeGitHub, extra ...string) *serverProc {
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		b.Fatal(err)
	}
	addr := l.Addr().String()
	l.Close()
	s := &serverProc{URL: "http://" + addr, DataDir: b.TempDir(), log: &lockedBuffer{}, done: make(chan struct{})}
	args := append([]string{"server", "--addr", addr, "--data-dir", s.DataDir,
		"--terraform-bin", terraformBin(b), "--log-level", "warn",
		"--gh-token", "gh-test-token", "--gh-user", "atoll-bot", "--gh-webhook-secret", webhookSecret,
		"--gh-api-url", gh.URL + "/", "--repo-allowlist", "github.com/acme/*",
		"--api-secret", testAPISecret, "--parallelism", "4", "--stop-timeout", "30s"}, extra...)
	s.cmd = exec.Command(atollBinary(b), args...)
	s.cmd.Env = append(os.Environ(), "CHECKPOINT_DISABLE=1")
	s.cmd.Stdout, s.cmd.Stderr = s.log, s.log
	s.cmd.SysProcAttr = &syscall.SysProcAttr{Pdeathsig: syscall.SIGKILL}
	if err := s.cmd.Start(); err != nil {
		b.Fatal(err)
	}
	go func() { s.cmd.Wait(); close(s.done) }()
	b.Cleanup(func() {
		s.cmd.Process.Kill()
		<-s.done
		if b.Failed() {
			b.Logf("server output:\n%s", s.log.String())
		}
	})
	eventually(b, 30*time.Second, "the server's /healthz", func() bool {
		resp, err := haClient.Get(s.URL + "/healthz")
		if err != nil {
			return false
		}
		resp.Body.Close()
		return resp.StatusCode == http.StatusOK
	})
	return s
}

// stop stops the server (SIGTERM) and returns its whole CPU time and its
// reaped children's (getrusage of the exited child).
func (s *serverProc) stop(b testing.TB) time.Duration {
	s.cmd.Process.Signal(syscall.SIGTERM)
	select {
	case <-s.done:
	case <-time.After(time.Minute):
		b.Fatal("the server did not stop within a minute")
	}
	return s.cmd.ProcessState.UserTime() + s.cmd.ProcessState.SystemTime()
}

// tail is the end of the server's output.
func (s *serverProc) tail() string {
	out := s.log.String()
	if len(out) > 4000 {
		out = out[len(out)-4000:]
	}
	return out
}

// procCPU is pid's CPU time so far, with that of its reaped children, and
// its own alone (utime+stime+cutime+cstime and utime+stime of
// /proc/PID/stat, in clock ticks of 10 ms).
func procCPU(b testing.TB, pid int) (total, self time.Duration) {
	f, err := os.Open(fmt.Sprintf("/proc/%d/stat", pid))
	if err != nil {
		b.Fatal(err)
	}
	defer f.Close()
	line, _ := bufio.NewReader(f).ReadString('\n')
	fields := strings.Fields(line[strings.LastIndexByte(line, ')')+2:])
	tick := func(i int) time.Duration { // i: the field's number in proc(5)
		v, err := strconv.ParseInt(fields[i-3], 10, 64)
		if err != nil {
			b.Fatalf("/proc/%d/stat field %d: %v", pid, i, err)
		}
		return time.Duration(v) * 10 * time.Millisecond
	}
	self = tick(14) + tick(15)
	return self + tick(16) + tick(17), self
}

// reportMax is report with the max.
func reportMax(b *testing.B, name string, d []time.Duration) {
	if len(d) == 0 {
		b.Fatalf("no %s samples", name)
	}
	report(b, name, d)
	s := append([]time.Duration(nil), d...)
	sort.Slice(s, func(i, j int) bool { return s[i] < s[j] })
	b.ReportMetric(float64(s[len(s)-1].Microseconds())/1000, name+"-max-ms")
}
