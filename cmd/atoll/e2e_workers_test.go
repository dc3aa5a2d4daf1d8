package main_test

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"io/fs"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/atollhq/atoll"
	main "github.com/atollhq/atoll/cmd/atoll"
)

// Worker pools end to end: the real server (Main), real `atoll worker`
// processes of the built binary, real Terraform in them, and a real git
// server the control plane alone holds the token of.

// workerProc is a running `atoll worker`.
type workerProc struct {
	name    string
	dataDir string
	cmd     *exec.Cmd
	out     *lockedBuffer
	done    chan struct{} // closed once the process exited
}

// workerToken makes a worker token of pool and writes its secret to a
// file, returning the file and the secret.
func workerToken(t testing.TB, m *main.Main, pool string) (file, secret string) {
	t.Helper()
	_, secret, err := m.Dispatcher.CreateWorkerToken(context.Background(), "test-"+pool, pool, "admin", "test")
	if err != nil {
		t.Fatal(err)
	}
	file = filepath.Join(t.TempDir(), "token")
	if err := os.WriteFile(file, []byte(secret+"\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	return file, secret
}

// startWorker starts an `atoll worker` of pool against servers.
func startWorker(t testing.TB, name, pool, tokenFile string, servers ...string) *workerProc {
	t.Helper()
	w := &workerProc{name: name, dataDir: t.TempDir(), out: &lockedBuffer{}, done: make(chan struct{})}
	w.cmd = exec.Command(atollBinary(t), "worker", "--server", strings.Join(servers, ","), "--token-file", tokenFile,
		"--pool", pool, "--name", name, "--data-dir", w.dataDir, "--terraform-bin", terraformBin(t), "--log-level", "debug")
	w.cmd.Env = append(os.Environ(), "ATOLL_TEST_WORKER_SECRET_MARKER=1")
	w.cmd.Stdout, w.cmd.Stderr = w.out, w.out
	if err := w.cmd.Start(); err != nil {
		t.Fatal(err)
	}
	go func() { w.cmd.Wait(); close(w.done) }()
	t.Cleanup(func() {
		w.cmd.Process.Signal(syscall.SIGCONT)
		w.cmd.Process.Kill()
		<-w.done
		if t.Failed() {
			t.Logf("worker %s output:\n%s", name, w.out.String())
		}
	})
	return w
}

// kill kills the worker at once (SIGKILL) and waits for it.
func (w *workerProc) kill() {
	w.cmd.Process.Kill()
	<-w.done
}

// workersRepoConfig routes the repository (by its id) to pool, lets atlantis.yaml
// choose a project's pool, and defines workflows whose steps sleep, so a
// test can act while a job runs on its worker.
func workersRepoConfig(t testing.TB, pool string, workflow string) string {
	repo := map[string]any{"id": "github.com/acme/infra", "execution_pool": pool, "allowed_overrides": []string{"execution_pool", "workflow"}, "allowed_workflows": []string{"slow"}}
	if workflow != "" {
		repo["workflow"] = workflow
	}
	cfg, err := json.Marshal(map[string]any{
		"repos": []any{repo},
		"workflows": map[string]any{"slow": map[string]any{
			"plan":  map[string]any{"steps": []any{"init", map[string]any{"run": "sleep 4"}, "plan"}},
			"apply": map[string]any{"steps": []any{map[string]any{"run": "sleep 5"}, "apply"}},
		}},
	})
	if err != nil {
		t.Fatal(err)
	}
	return string(cfg)
}

func newWorkersE2E(t *testing.T, pool, workflow string) *e2e {
	return newE2EWith(t, map[string]string{
		"staging/main.tf":    tfProject("staging", 1),
		"production/main.tf": tfProject("production", 1),
	}, func(c *main.Config) {
		c.RepoConfigJSON = workersRepoConfig(t, pool, workflow)
		c.WorkerLease = 3 * time.Second
		c.Parallelism = 4
	})
}

// pullJobs are the jobs of pull request number, oldest first.
func pullJobs(t *testing.T, e *e2e, number int, kind string) []atoll.Job {
	t.Helper()
	var jobs []atoll.Job
	getJSON(t, fmt.Sprintf("%s/api/v1/jobs?repo=acme/infra&pull=%d&kind=%s", e.m.URL, number, kind), &jobs)
	return jobs
}

// onlyJob waits for pull request number's job of kind, the only one.
func onlyJob(t *testing.T, e *e2e, number int, kind string) atoll.Job {
	t.Helper()
	var job atoll.Job
	eventually(t, 30*time.Second, "the "+kind+" job", func() bool {
		jobs := pullJobs(t, e, number, kind)
		if len(jobs) == 1 {
			job = jobs[0]
		}
		return len(jobs) == 1
	})
	return job
}

// dispatchOf waits for job id's dispatch to satisfy cond.
func dispatchOf(t *testing.T, e *e2e, jobID int64, what string, cond func(*atoll.Dispatch) bool) *atoll.Dispatch {
	t.Helper()
	var d *atoll.Dispatch
	eventually(t, 60*time.Second, what, func() bool {
		var err error
		d, err = e.m.DB.Dispatch(context.Background(), jobID)
		return err == nil && cond(d)
	})
	return d
}

// noSecretsOnDisk fails if any file under dir holds one of the secrets.
func noSecretsOnDisk(t *testing.T, dir string, secrets ...string) {
	t.Helper()
	for _, leak := range filesHolding(dir, secrets...) {
		t.Error(leak)
	}
}

// filesHolding says which files under dir hold one of the secrets.
func filesHolding(dir string, secrets ...string) []string {
	var leaks []string
	filepath.WalkDir(dir, func(path string, d fs.DirEntry, err error) error {
		if err != nil || d.IsDir() {
			return nil
		}
		b, err := os.ReadFile(path)
		if err != nil {
			return nil
		}
		for _, s := range secrets {
			if bytes.Contains(b, []byte(s)) {
				leaks = append(leaks, fmt.Sprintf("%s holds a secret (%.6s…)", path, s))
			}
		}
		return nil
	})
	return leaks
}

// Plans and applies of several pull requests run on two workers; the
// control plane stores their plans and logs; a project routed to a pool
// with no worker waits and says so, until one comes.
func TestWorkersPlanAndApply(t *testing.T) {
	e := newWorkersE2E(t, "gpu", "")
	tokenFile, secret := workerToken(t, e.m, "gpu")
	w1 := startWorker(t, "w1", "gpu", tokenFile, e.m.URL)
	w2 := startWorker(t, "w2", "gpu", tokenFile, e.m.URL)

	e.open(1, "grow-staging", map[string]string{"staging/main.tf": tfProject("staging", 2)}, "staging/main.tf")
	e.open(2, "grow-production", map[string]string{"production/main.tf": tfProject("production", 3)}, "production/main.tf")
	mustContain(t, "plan on #1", e.waitComment(1, 1), "Plan: 2 to add", "atlantis apply -d staging")
	mustContain(t, "plan on #2", e.waitComment(2, 1), "Plan: 3 to add", "atlantis apply -d production")

	workers := map[string]bool{}
	for _, n := range []int{1, 2} {
		jobs := pullJobs(t, e, n, atoll.JobPlan)
		if len(jobs) != 1 || jobs[0].State != atoll.JobSucceeded {
			t.Fatalf("plan jobs of #%d: %+v", n, jobs)
		}
		d := dispatchOf(t, e, jobs[0].ID, "plan dispatch done", func(d *atoll.Dispatch) bool { return d.State == atoll.DispatchDone })
		if d.Pool != "gpu" || d.Attempt != 1 {
			t.Fatalf("dispatch %+v", d)
		}
		workers[d.Worker] = true
		lines, err := e.m.DB.Logs(context.Background(), jobs[0].ID, 0, 1000)
		if err != nil {
			t.Fatal(err)
		}
		var log strings.Builder
		for _, l := range lines {
			log.WriteString(l.Text + "\n")
		}
		mustContain(t, "the job's log", log.String(), "Running on worker "+d.Worker+" (pool gpu, attempt 1).", "$ terraform plan", "Plan: ")
	}
	t.Logf("plans ran on %v", workers)

	e.comment(1, "atlantis apply -d staging")
	mustContain(t, "apply on #1", e.waitComment(1, 2), "Apply complete! Resources: 2 added")
	applies := pullJobs(t, e, 1, atoll.JobApply)
	if len(applies) != 1 || applies[0].State != atoll.JobSucceeded {
		t.Fatalf("apply jobs: %+v", applies)
	}
	dispatchOf(t, e, applies[0].ID, "apply dispatch done", func(d *atoll.Dispatch) bool { return d.State == atoll.DispatchDone && d.Applying })

	// A project atlantis.yaml sends to a pool with no worker waits, and
	// the pull request's status says why; a worker of that pool runs it.
	sha := e.open(3, "cpu-canary", map[string]string{
		"atlantis.yaml":  "version: 3\nprojects:\n- dir: canary\n  execution_pool: cpu\n",
		"canary/main.tf": tfProject("canary", 4),
	}, "canary/main.tf")
	e.waitStatus(sha, "atlantis/plan: canary/default", "pending", "Waiting for a worker in pool cpu.")
	cpuToken, cpuSecret := workerToken(t, e.m, "cpu")
	w3 := startWorker(t, "w3", "cpu", cpuToken, e.m.URL)
	mustContain(t, "plan on #3", e.waitComment(3, 1), "Plan: 4 to add")
	jobs := pullJobs(t, e, 3, atoll.JobPlan)
	if d := dispatchOf(t, e, jobs[0].ID, "cpu dispatch", func(d *atoll.Dispatch) bool { return d.State == atoll.DispatchDone }); d.Worker != "w3" {
		t.Fatalf("the cpu project ran on %q", d.Worker)
	}

	// No VCS token, worker token or job token is left on a worker's disk.
	for _, w := range []*workerProc{w1, w2, w3} {
		noSecretsOnDisk(t, w.dataDir, "gh-test-token", secret, cpuSecret, "atj_")
	}

	// Revoking the cpu pool's token from the admin page's service stops
	// its worker while it waits in a claim: it exits, saying why.
	toks, err := e.m.DB.WorkerTokens(context.Background())
	if err != nil {
		t.Fatal(err)
	}
	for _, tok := range toks {
		if tok.Pool == "cpu" {
			if err := e.m.Dispatcher.RevokeWorkerToken(context.Background(), tok.ID, "admin", "test"); err != nil {
				t.Fatal(err)
			}
		}
	}
	select {
	case <-w3.done:
	case <-time.After(10 * time.Second):
		t.Fatal("the worker of a revoked token goes on polling")
	}
	if code := w3.cmd.ProcessState.ExitCode(); code != 1 || !strings.Contains(w3.out.String(), "revoked") {
		t.Fatalf("worker of a revoked token: exit %d:\n%s", code, w3.out.String())
	}
	select {
	case <-w1.done:
		t.Fatal("a worker of another token stopped")
	default:
	}
}

// A worker killed mid-plan loses its claim when its lease runs out: the
// plan runs again, once, on another worker. A worker killed mid-apply
// (after the apply started) is never replaced: the apply is interrupted
// and the pull request told.
func TestWorkerKilledMidPlanAndMidApply(t *testing.T) {
	e := newWorkersE2E(t, "gpu", "slow")
	tokenFile, _ := workerToken(t, e.m, "gpu")
	procs := map[string]*workerProc{}
	for _, n := range []string{"w1", "w2"} {
		procs[n] = startWorker(t, n, "gpu", tokenFile, e.m.URL)
	}
	e.open(1, "grow", map[string]string{"staging/main.tf": tfProject("staging", 2)}, "staging/main.tf")
	job := onlyJob(t, e, 1, atoll.JobPlan)
	first := dispatchOf(t, e, job.ID, "the plan claimed", func(d *atoll.Dispatch) bool { return d.State == atoll.DispatchClaimed })
	procs[first.Worker].kill()
	mustContain(t, "plan after the kill", e.waitComment(1, 1), "Plan: 2 to add")
	d := dispatchOf(t, e, job.ID, "the plan's second attempt", func(d *atoll.Dispatch) bool { return d.State == atoll.DispatchDone })
	if d.Attempt != 2 || d.Worker == first.Worker {
		t.Fatalf("after the kill: %+v (first %s)", d, first.Worker)
	}
	if n := len(pullJobs(t, e, 1, atoll.JobPlan)); n != 1 {
		t.Fatalf("%d plan jobs: the plan ran again in the same job", n)
	}

	e.comment(1, "atlantis apply")
	apply := onlyJob(t, e, 1, atoll.JobApply)
	started := dispatchOf(t, e, apply.ID, "the apply started", func(d *atoll.Dispatch) bool { return d.State == atoll.DispatchClaimed && d.Applying })
	procs[started.Worker].kill()
	reply := e.waitComment(1, 2)
	mustContain(t, "apply after the kill", reply, "Interrupted", "not retried")
	d = dispatchOf(t, e, apply.ID, "the apply lost", func(d *atoll.Dispatch) bool { return d.State == atoll.DispatchLost })
	if d.Attempt != 1 {
		t.Fatalf("the apply was dispatched again: %+v", d)
	}
	jobs := pullJobs(t, e, 1, atoll.JobApply)
	if len(jobs) != 1 || jobs[0].State != atoll.JobInterrupted {
		t.Fatalf("apply jobs: %+v", jobs)
	}
}

// A worker stopped (SIGSTOP) past its lease loses the plan to another
// worker; resumed (SIGCONT), its late report is refused and the pull
// request gets the other worker's plan only.
func TestStoppedWorkerLateReportRefused(t *testing.T) {
	e := newWorkersE2E(t, "gpu", "slow")
	tokenFile, _ := workerToken(t, e.m, "gpu")
	procs := map[string]*workerProc{}
	for _, n := range []string{"w1", "w2"} {
		procs[n] = startWorker(t, n, "gpu", tokenFile, e.m.URL)
	}
	e.open(1, "grow", map[string]string{"staging/main.tf": tfProject("staging", 2)}, "staging/main.tf")
	job := onlyJob(t, e, 1, atoll.JobPlan)
	first := dispatchOf(t, e, job.ID, "the plan claimed", func(d *atoll.Dispatch) bool { return d.State == atoll.DispatchClaimed })
	stopped := procs[first.Worker]
	if err := stopped.cmd.Process.Signal(syscall.SIGSTOP); err != nil {
		t.Fatal(err)
	}
	mustContain(t, "the other worker's plan", e.waitComment(1, 1), "Plan: 2 to add")
	if err := stopped.cmd.Process.Signal(syscall.SIGCONT); err != nil {
		t.Fatal(err)
	}
	eventually(t, 30*time.Second, "the resumed worker told its claim is gone", func() bool {
		// Told by whichever call it makes first (a heartbeat, its
		// checkout's fetch, a batch of lines); it then reports nothing.
		return strings.Contains(stopped.out.String(), "job abandoned")
	})
	for _, l := range strings.Split(stopped.out.String(), "\n") {
		if strings.Contains(l, "abandon") || strings.Contains(l, "hold") {
			t.Logf("the resumed worker: %s", l)
		}
	}
	time.Sleep(2 * time.Second) // anything it still sent would land now
	if n := len(e.gh.pullComments(1)); n != 1 {
		t.Fatalf("%d comments: the late worker's report reached the pull request", n)
	}
	if d := dispatchOf(t, e, job.ID, "done", func(d *atoll.Dispatch) bool { return d.State == atoll.DispatchDone }); d.Worker == first.Worker {
		t.Fatalf("the stopped worker's result was taken: %+v", d)
	}
}

// The active node is killed (-9) while a worker applies, with a replica
// configured: the worker's Terraform goes on, it reports to the standby
// once that one took over, and the apply completes once, recorded by the
// new active, with exactly one outcome on the pull request.
func TestFailoverWhileWorkerApplies(t *testing.T) {
	c := newHACluster(t, "s3", map[string]string{"staging/main.tf": tfProject("staging", 1)})
	c.ExtraArgs = []string{"--repo-config-json", workersRepoConfig(t, "gpu", "slow"), "--worker-lease", "15s"}
	nodes := map[string]*haNode{"a": startNode(t, c, "a")}
	active := waitActive(t, 30*time.Second, nodes["a"])
	nodes["b"] = startNode(t, c, "b")
	waitStandbyOf(t, 10*time.Second, nodes["b"], active)

	// The token is made as an operator's script would: the admin route.
	form := strings.NewReader("name=ci&pool=gpu")
	req, _ := http.NewRequest(http.MethodPost, active.URL+"/admin/worker-tokens", form)
	req.Header.Set("Content-Type", "application/x-www-form-urlencoded")
	req.Header.Set("Accept", "application/json")
	resp, err := haClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	var made struct{ Token string }
	json.NewDecoder(resp.Body).Decode(&made)
	resp.Body.Close()
	if resp.StatusCode != http.StatusCreated || made.Token == "" {
		t.Fatalf("create worker token: %d", resp.StatusCode)
	}
	tokenFile := filepath.Join(t.TempDir(), "token")
	os.WriteFile(tokenFile, []byte(made.Token), 0o600)
	w := startWorker(t, "w1", "gpu", tokenFile, nodes["a"].URL, nodes["b"].URL)

	opened, _ := c.openPull(t, 1, "grow", map[string]string{"staging/main.tf": tfProject("staging", 2)}, "staging/main.tf")
	mustSend(t, active.URL, opened)
	eventually(t, 90*time.Second, "the plan comment", func() bool { return len(c.GH.pullComments(1)) == 1 })
	mustContain(t, "plan", c.GH.pullComments(1)[0], "Plan: 2 to add")

	mustSend(t, active.URL, c.commentDelivery(t, 1, "atlantis apply"))
	// The worker has the apply, which sleeps 5 s in its first step after
	// the server let it start: kill the active node then.
	eventually(t, 60*time.Second, "the worker applying", func() bool {
		return strings.Count(w.out.String(), `"job claimed"`) == 2
	})
	time.Sleep(1500 * time.Millisecond)
	standby := nodes["b"]
	if active.ID == "b" {
		standby = nodes["a"]
	}
	killedAt := time.Now()
	active.kill9(t)
	next := waitActive(t, takeoverBound, standby)
	t.Logf("%s killed, %s active in %v", active.ID, next.ID, time.Since(killedAt).Round(time.Millisecond))

	eventually(t, 90*time.Second, "the apply's outcome", func() bool { return len(c.GH.pullComments(1)) >= 2 })
	time.Sleep(2 * time.Second) // a second outcome would land now
	comments := c.GH.pullComments(1)
	if len(comments) != 2 {
		t.Fatalf("%d comments after the failover:\n%s", len(comments), strings.Join(comments, "\n---\n"))
	}
	mustContain(t, "the apply's outcome", comments[1], "Apply complete! Resources: 2 added")
	var jobs []atoll.Job
	if _, err := getJSONFrom(next.URL+"/api/v1/jobs?repo=acme/infra&pull=1&kind=apply", &jobs); err != nil {
		t.Fatal(err)
	}
	if len(jobs) != 1 || jobs[0].State != atoll.JobSucceeded {
		t.Fatalf("apply jobs on the new active: %+v", jobs)
	}
	if n := strings.Count(w.out.String(), `"job done"`); n != 2 {
		t.Fatalf("the worker finished %d jobs, want the plan and one apply:\n%s", n, w.out.String())
	}
}

// A job waiting on a pool lends its request's slot: with --parallelism 1,
// a pool with no worker does not stop a local project's plan.
func TestPoolWaitDoesNotHoldParallelism(t *testing.T) {
	e := newE2EWith(t, map[string]string{
		"staging/main.tf":    tfProject("staging", 1),
		"production/main.tf": tfProject("production", 1),
	}, func(c *main.Config) {
		c.RepoConfigJSON = workersRepoConfig(t, "gpu", "")
		c.Parallelism = 1
	})
	sha := e.open(1, "gpu-staging", map[string]string{"staging/main.tf": tfProject("staging", 2)}, "staging/main.tf")
	e.waitStatus(sha, "atlantis/plan: staging/default", "pending", "Waiting for a worker in pool gpu.")
	e.open(2, "local-production", map[string]string{
		"atlantis.yaml":      "version: 3\nprojects:\n- dir: production\n  execution_pool: local\n",
		"production/main.tf": tfProject("production", 3),
	}, "production/main.tf")
	mustContain(t, "the local plan", e.waitComment(2, 1), "Plan: 3 to add")
	if n := len(e.gh.pullComments(1)); n != 0 {
		t.Fatalf("the waiting pull request has %d comments", n)
	}
	tokenFile, _ := workerToken(t, e.m, "gpu")
	startWorker(t, "w1", "gpu", tokenFile, e.m.URL)
	mustContain(t, "the pool's plan", e.waitComment(1, 1), "Plan: 2 to add")
}

// A plan stage without a plan file runs on a worker as on the active node:
// the plan is stored without a file, and its apply, a stage of run steps,
// runs on the worker without downloading one.
func TestWorkersPlanWithoutPlanFile(t *testing.T) {
	e := newE2EWith(t, map[string]string{"staging/main.tf": tfProject("staging", 1)}, func(c *main.Config) {
		c.RepoConfigJSON = `{"repos": [{"id": "github.com/acme/infra", "execution_pool": "gpu", "workflow": "handmade"}],
			"workflows": {"handmade": {"plan": {"steps": [{"run": "echo planned by hand on $WORKSPACE"}]},
				"apply": {"steps": [{"run": "test ! -e \"$PLANFILE\" && echo applied by hand"}]}}}}`
		c.WorkerLease = 3 * time.Second
	})
	tokenFile, _ := workerToken(t, e.m, "gpu")
	startWorker(t, "w1", "gpu", tokenFile, e.m.URL)
	e.open(1, "by-hand", map[string]string{"staging/main.tf": tfProject("staging", 2)}, "staging/main.tf")
	mustContain(t, "plan", e.waitComment(1, 1), "planned by hand on default", "atlantis apply -d staging")
	e.comment(1, "atlantis apply -d staging")
	mustContain(t, "apply", e.waitComment(1, 2), "applied by hand")
	applies := pullJobs(t, e, 1, atoll.JobApply)
	if len(applies) != 1 || applies[0].State != atoll.JobSucceeded {
		t.Fatalf("apply jobs: %+v", applies)
	}
	dispatchOf(t, e, applies[0].ID, "apply dispatch done", func(d *atoll.Dispatch) bool { return d.State == atoll.DispatchDone && d.Worker == "w1" })
}
