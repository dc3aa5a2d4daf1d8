package main_test

import (
	"context"
	"fmt"
	"net/http"
	"os"
	"slices"
	"sort"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	batchv1 "k8s.io/api/batch/v1"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/watch"

	"github.com/atollhq/atoll"
	main "github.com/atollhq/atoll/cmd/atoll"
	"github.com/atollhq/atoll/kube"
	"github.com/atollhq/atoll/kube/kubetest"
)

// The Kubernetes Jobs executor: its figures. The Kubernetes API is the
// kubetest fake (client-go's wire format on 127.0.0.1), each Job's pod is
// a real `atoll worker --once` process of the built binary (newKubeCluster)
// running real Terraform, and the server is Main in this process. Times
// compare timestamps of one machine clock: the dispatch's created_at and
// claimed_at and the stored log lines' times are the server's.

// startKubeBenchMain is startBenchMain for a server whose default pool runs
// on the fake cluster k, with parallelism jobs at once.
func startKubeBenchMain(b testing.TB, gh *fakeGitHub, k *kubeCluster, repoConfig string, parallelism int) *main.Main {
	m := startMain(b, b.TempDir(), func(c *main.Config) {
		c.GHToken, c.GHUser, c.GHWebhookSecret, c.GHAPIURL = "gh-test-token", "atoll-bot", webhookSecret, gh.URL+"/"
		c.RepoAllowlist = "github.com/acme/*"
		c.RepoConfigJSON = repoConfig
		c.DefaultExecutionPool = "k8s"
		c.Kubeconfig = k.kubeconfig
		c.Parallelism = parallelism
		c.LogLevel = "error"
		if l := os.Getenv("ATOLL_BENCH_LOG"); l != "" {
			c.LogLevel = l
		}
	})
	b.Cleanup(func() { m.Close() })
	return m
}

// kubeRun is what one plan's run took, from the store.
type kubeRun struct {
	job int64
	// queued is the dispatch's created_at: the runner's intake (the pull
	// request's files, the checkout, the lock) is done.
	queued time.Time
	// started is the job's "Started Kubernetes Job" line (zero for a
	// worker pool): the Secret and the Job are created.
	started time.Time
	claimed time.Time
	// firstLine is the stored time of the job's first line from its
	// worker (the first after the server's "Running on worker" line that
	// is not one of the server's notes).
	firstLine time.Time
	// result is the dispatch's finished_at (the worker's result stored);
	// ended is the job's finished_at (the job recorded done, which the
	// plan comment follows).
	result, ended time.Time
}

// runOf reads pull request number's one plan job, checks it succeeded
// with its dispatch's first attempt, and reads its times.
func runOf(b testing.TB, m *main.Main, number int) kubeRun {
	b.Helper()
	var jobs []atoll.Job
	getJSON(b, fmt.Sprintf("%s/api/v1/jobs?repo=acme/infra&pull=%d&kind=plan", m.URL, number), &jobs)
	if len(jobs) != 1 || jobs[0].State != atoll.JobSucceeded {
		b.Fatalf("plan jobs of #%d: %+v", number, jobs)
	}
	if jobs[0].FinishedAt == nil {
		b.Fatalf("plan job of #%d not finished: %+v", number, jobs[0])
	}
	r := kubeRun{job: jobs[0].ID, ended: *jobs[0].FinishedAt}
	// The job is recorded succeeded once its result is stored; the
	// dispatch is done by then.
	d, err := m.DB.Dispatch(context.Background(), r.job)
	if err != nil {
		b.Fatal(err)
	}
	if d.State != atoll.DispatchDone || d.Attempt != 1 || d.ClaimedAt == nil || d.FinishedAt == nil {
		b.Fatalf("dispatch of job %d (#%d): %+v", r.job, number, d)
	}
	r.queued, r.claimed, r.result = d.CreatedAt, *d.ClaimedAt, *d.FinishedAt
	lines, err := m.DB.Logs(context.Background(), r.job, 0, 5000)
	if err != nil {
		b.Fatal(err)
	}
	running := false
	for _, l := range lines {
		switch {
		case strings.HasPrefix(l.Text, "Started Kubernetes Job "):
			r.started = l.Time
		case strings.HasPrefix(l.Text, "Running on worker "):
			running = true
		case running && r.firstLine.IsZero() && !strings.HasPrefix(l.Text, "Kubernetes: "):
			r.firstLine = l.Time
		}
	}
	if r.firstLine.IsZero() {
		var text strings.Builder
		for _, l := range lines {
			text.WriteString(l.Text + "\n")
		}
		b.Fatalf("job %d (#%d): no worker line in its log:\n%s", r.job, number, text.String())
	}
	return r
}

// reportTail reports d's p50, p90 and max in milliseconds.
func reportTail(b *testing.B, name string, d []time.Duration) {
	if len(d) == 0 {
		b.Fatalf("no %s samples", name)
	}
	s := slices.Clone(d)
	slices.Sort(s)
	ms := func(x time.Duration) float64 { return float64(x.Microseconds()) / 1000 }
	b.ReportMetric(ms(s[int(0.5*float64(len(s)-1))]), name+"-p50-ms")
	b.ReportMetric(ms(s[int(0.9*float64(len(s)-1))]), name+"-p90-ms")
	b.ReportMetric(ms(s[len(s)-1]), name+"-max-ms")
	// Also in the log: a benchmark that fails shows no metrics.
	b.Logf("%s: p50 %.1f ms, p90 %.1f ms, max %.1f ms (%d samples)", name, ms(s[int(0.5*float64(len(s)-1))]), ms(s[int(0.9*float64(len(s)-1))]), ms(s[len(s)-1]), len(s))
}

// tally counts requests by verb and resource ("create jobs").
func tally(reqs []kubetest.Request) map[string]int {
	out := map[string]int{}
	for _, r := range reqs {
		k := r.Verb + " " + r.Resource
		if r.Subresource != "" {
			k += "/" + r.Subresource
		}
		out[k]++
	}
	return out
}

// formatTally is a tally in a stable order.
func formatTally(t map[string]int) string {
	keys := make([]string, 0, len(t))
	for k := range t {
		keys = append(keys, k)
	}
	sort.Strings(keys)
	var parts []string
	for _, k := range keys {
		parts = append(parts, fmt.Sprintf("%s: %d", k, t[k]))
	}
	return strings.Join(parts, ", ")
}

// BenchmarkKubeVsPoolOverhead: the same plan (each a new pull request
// changing its own project) run one at a time, alternately as a
// Kubernetes Job of pool k8s (the fake API; the pod is a real `atoll
// worker --once`, started for the job) and by the one long-running `atoll
// worker` of pool gpu, idle in its claim; one server, each pull request's
// atlantis.yaml naming the pool of its project. Figures, from the
// dispatch's created_at (queued: the runner's intake is done, the same for
// both):
//   - claimed: the dispatch's claimed_at;
//   - first-line: the stored time of the job's first line from its worker
//     (the server's clock when it took the line in);
//   - result: the dispatch's finished_at (the worker's result stored);
//   - ended: the job's finished_at (the job recorded done: the comment
//     follows);
//   - api-calls/run: the Kubernetes API requests between one Kubernetes run's
//     webhook and the next's (the pool runs in between make none), after
//     the Job is gone (ttlSecondsAfterFinished 1): all of one run's.
//
// Pair 0 warms both up and is not measured.
func BenchmarkKubeVsPoolOverhead(b *testing.B) {
	testEnv(b)
	terraformBin(b) // skips without Terraform
	pairs := b.N + 1
	files := map[string]string{}
	for p := 1; p <= 2*pairs; p++ {
		files[fmt.Sprintf("p%d/main.tf", p)] = tfProject("p", 1)
	}
	repo := newGitRepo(b, files)
	base := repo.git("rev-parse", "main")
	gh := newFakeGitHub(b)
	shas := map[int]string{}
	pool := func(pull int) string {
		if pull%2 == 1 {
			return "k8s"
		}
		return "gpu"
	}
	for p := 1; p <= 2*pairs; p++ {
		project := fmt.Sprintf("p%d/main.tf", p)
		shas[p] = repo.branch(fmt.Sprintf("b%d", p), map[string]string{
			project:         tfProject("p", 2),
			"atlantis.yaml": fmt.Sprintf("version: 3\nprojects:\n- dir: p%d\n  execution_pool: %s\n", p, pool(p)),
		})
		gh.setPull(p, fakePull{HeadSHA: shas[p], HeadRef: fmt.Sprintf("b%d", p), BaseSHA: base, BaseRef: "main", Files: []string{project}})
	}
	cloneURL, _ := serveGit(b, repo, "gh-test-token")
	k := newKubeCluster(b)
	m := startKubeBenchMain(b, gh, k, kubeRepoConfig(b), 4)
	tokenFile, _ := workerToken(b, m, "gpu")
	w := startWorker(b, "w1", "gpu", tokenFile, m.URL)
	eventually(b, 30*time.Second, "the worker started", func() bool { return strings.Contains(w.out.String(), "atoll worker started") })
	b.Logf("Kubernetes API requests at the server's start: %s", formatTally(tally(k.srv.Recorded())))

	plan := func(pull int) kubeRun {
		resp := webhook(b, m.URL, "pull_request", "pull_request.opened.json", webhookSecret, pullEvent(cloneURL, pull, "opened", fmt.Sprintf("b%d", pull), shas[pull], base))
		if resp.StatusCode != http.StatusOK {
			b.Fatalf("webhook %d: status %d", pull, resp.StatusCode)
		}
		eventually(b, 2*time.Minute, fmt.Sprintf("the plan comment on #%d", pull), func() bool { return len(gh.pullComments(pull)) > 0 })
		if c := gh.pullComments(pull)[0]; !contains(c, "Plan: 2 to add") {
			b.Fatalf("comment on #%d:\n%s", pull, c)
		}
		if pool(pull) == "gpu" {
			// The worker is back in its claim once it logged the job done.
			eventually(b, 30*time.Second, "the worker's job done", func() bool { return strings.Count(w.out.String(), `"job done"`) == pull/2 })
		}
		r := runOf(b, m, pull)
		if pool(pull) == "k8s" && r.started.IsZero() {
			b.Fatalf("#%d's job %d ran without a Kubernetes Job", pull, r.job)
		}
		if pool(pull) == "gpu" && !r.started.IsZero() {
			b.Fatalf("#%d's job %d ran as a Kubernetes Job", pull, r.job)
		}
		return r
	}
	var kubeClaim, kubeLine, kubeResult, kubeEnded, kubeLaunch, poolClaim, poolLine, poolResult, poolEnded []time.Duration
	var perRun []int
	var measured []kubetest.Request
	b.ResetTimer()
	for i := 0; i < pairs; i++ {
		from := len(k.srv.Recorded())
		kr := plan(2*i + 1)
		// A pool run between: its Job's TTL runs out meanwhile.
		pr := plan(2*i + 2)
		eventually(b, 30*time.Second, "the Kubernetes Job removed", func() bool {
			return k.srv.Object("jobs", kubeNamespace, kube.Name(kr.job, 1)) == nil && len(k.srv.Pods(kubeNamespace)) == 0
		})
		time.Sleep(50 * time.Millisecond)
		reqs := k.srv.Recorded()[from:]
		if i == 0 {
			b.Logf("warm-up Kubernetes run: %d API requests: %s", len(reqs), formatTally(tally(reqs)))
			continue
		}
		perRun = append(perRun, len(reqs))
		measured = append(measured, reqs...)
		kubeClaim = append(kubeClaim, kr.claimed.Sub(kr.queued))
		kubeLine = append(kubeLine, kr.firstLine.Sub(kr.queued))
		kubeResult = append(kubeResult, kr.result.Sub(kr.queued))
		kubeEnded = append(kubeEnded, kr.ended.Sub(kr.queued))
		kubeLaunch = append(kubeLaunch, kr.started.Sub(kr.queued))
		poolClaim = append(poolClaim, pr.claimed.Sub(pr.queued))
		poolLine = append(poolLine, pr.firstLine.Sub(pr.queued))
		poolResult = append(poolResult, pr.result.Sub(pr.queued))
		poolEnded = append(poolEnded, pr.ended.Sub(pr.queued))
	}
	b.StopTimer()
	if n := k.created(); n != pairs {
		b.Fatalf("%d Jobs created for %d Kubernetes runs", n, pairs)
	}
	reportTail(b, "kube-launched", kubeLaunch)
	reportTail(b, "kube-claimed", kubeClaim)
	reportTail(b, "pool-claimed", poolClaim)
	reportTail(b, "kube-first-line", kubeLine)
	reportTail(b, "pool-first-line", poolLine)
	reportTail(b, "kube-result", kubeResult)
	reportTail(b, "pool-result", poolResult)
	reportTail(b, "kube-ended", kubeEnded)
	reportTail(b, "pool-ended", poolEnded)
	b.ReportMetric(float64(len(measured))/float64(len(perRun)), "api-calls/run")
	b.Logf("Kubernetes API requests of %d runs: %s (per run: %v)", len(perRun), formatTally(tally(measured)), perRun)
	k.checkRBAC(b)
	k.checkNoLeaks(b)
}

// benchKubePlans is how many pull requests BenchmarkKubePlans opens:
// ATOLL_BENCH_KUBE_PLANS, 50 by default (the documented run).
func benchKubePlans(b testing.TB) int {
	if v := os.Getenv("ATOLL_BENCH_KUBE_PLANS"); v != "" {
		n, err := strconv.Atoi(v)
		if err != nil || n < 1 {
			b.Fatalf("ATOLL_BENCH_KUBE_PLANS=%q", v)
		}
		return n
	}
	return 50
}

// jobWatch follows the fake's Jobs through its API: every Job created,
// by its atoll job id label, and the most unfinished at once.
type jobWatch struct {
	mu      sync.Mutex
	byJob   map[string][]string // atoll.dev/job-id → the Jobs' names
	attempt map[string]string   // Job name → its attempt label
	active  map[string]bool
	peak    int
}

func watchJobs(b testing.TB, k *kubeCluster) *jobWatch {
	ctx, cancel := context.WithCancel(context.Background())
	stream, err := k.srv.Client().BatchV1().Jobs(kubeNamespace).Watch(ctx, metav1.ListOptions{})
	if err != nil {
		b.Fatal(err)
	}
	jw := &jobWatch{byJob: map[string][]string{}, attempt: map[string]string{}, active: map[string]bool{}}
	done := make(chan struct{})
	go func() {
		defer close(done)
		for ev := range stream.ResultChan() {
			j, ok := ev.Object.(*batchv1.Job)
			if !ok {
				continue
			}
			finished := slices.ContainsFunc(j.Status.Conditions, func(c batchv1.JobCondition) bool {
				return (c.Type == batchv1.JobComplete || c.Type == batchv1.JobFailed) && c.Status == corev1.ConditionTrue
			})
			jw.mu.Lock()
			switch ev.Type {
			case watch.Added:
				id := j.Labels[kube.LabelJobID]
				jw.byJob[id] = append(jw.byJob[id], j.Name)
				jw.attempt[j.Name] = j.Labels[kube.LabelAttempt]
				jw.active[j.Name] = !finished
			case watch.Modified:
				if finished {
					jw.active[j.Name] = false
				}
			case watch.Deleted:
				jw.active[j.Name] = false
			}
			n := 0
			for _, a := range jw.active {
				if a {
					n++
				}
			}
			jw.peak = max(jw.peak, n)
			jw.mu.Unlock()
		}
	}()
	b.Cleanup(func() { cancel(); stream.Stop(); <-done })
	return jw
}

// BenchmarkKubePlans opens ATOLL_BENCH_KUBE_PLANS (50) pull requests one
// right after another, each changing its own project, against a server
// whose default pool runs on the fake cluster, with --parallelism 50; each
// plan is a Kubernetes Job whose pod is a real `atoll worker --once`
// running real Terraform, all on this machine's cores. It fails unless
// every pull request gets its plan comment and one succeeded plan job
// whose dispatch is done at attempt 1 (0 lost), exactly one Job was
// created per job (counted from the API's create requests and from a watch
// of the Jobs, by their job-id label: 0 run twice), and once their TTL
// (ttlSecondsAfterFinished 1) ran out no Job, pod or Secret is left.
func BenchmarkKubePlans(b *testing.B) {
	testEnv(b)
	terraformBin(b) // skips without Terraform
	for iter := 0; iter < b.N; iter++ {
		kubePlansRun(b)
	}
}

func kubePlansRun(b *testing.B) {
	pulls := benchKubePlans(b)
	repo, base, gh, shas := manyPulls(b, pulls, pulls)
	cloneURL, _ := serveGit(b, repo, "gh-test-token")
	k := newKubeCluster(b)
	jw := watchJobs(b, k)
	ours := len(k.srv.Recorded()) // the watch's
	m := startKubeBenchMain(b, gh, k, kubeRepoConfig(b), 50)
	bodies := make([][]byte, pulls)
	for i := range bodies {
		bodies[i] = webhookBody(b, "pull_request.opened.json", pullEvent(cloneURL, i+1, "opened", fmt.Sprintf("b%d", i), shas[i], base))
	}
	from := len(k.srv.Recorded())
	b.Logf("Kubernetes API requests at the server's start: %s", formatTally(tally(k.srv.Recorded()[ours:from])))
	start := time.Now()
	b.StartTimer()
	for i := 0; i < pulls; i++ {
		if resp := postWebhook(b, m.URL, "pull_request", bodies[i], sign(bodies[i], webhookSecret)); resp.StatusCode != http.StatusOK {
			b.Fatalf("webhook %d: status %d", i+1, resp.StatusCode)
		}
	}
	b.Logf("%d webhooks answered in %v", pulls, time.Since(start).Round(time.Millisecond))
	done := 0
	for done < pulls {
		done = 0
		var waiting []int
		for i := 1; i <= pulls; i++ {
			if len(gh.pullComments(i)) > 0 {
				done++
			} else {
				waiting = append(waiting, i)
			}
		}
		if done < pulls && time.Since(start) > 5*time.Minute {
			for _, i := range waiting {
				var jobs []atoll.Job
				getJSON(b, fmt.Sprintf("%s/api/v1/jobs?repo=acme/infra&pull=%d&kind=plan", m.URL, i), &jobs)
				for _, j := range jobs {
					d, err := m.DB.Dispatch(context.Background(), j.ID)
					b.Logf("#%d: job %d %s, dispatch %+v (%v)", i, j.ID, j.State, d, err)
				}
			}
			b.Fatalf("only %d of %d pull requests commented after 5 minutes: %v wait", done, pulls, waiting)
		}
		time.Sleep(5 * time.Millisecond)
	}
	wall := time.Since(start)
	b.StopTimer()

	// 0 lost: every pull request planned, its dispatch done at attempt 1.
	var launched, claimed, firstLine, result, ended, lag []time.Duration
	var first, last time.Time
	jobIDs := map[string]int{}
	for i := 1; i <= pulls; i++ {
		if c := gh.pullComments(i); len(c) != 1 || !contains(c[0], "Plan: 2 to add") {
			b.Fatalf("#%d has %d comments, the first:\n%s", i, len(c), c[0])
		}
		r := runOf(b, m, i)
		if r.started.IsZero() {
			b.Fatalf("#%d's job %d ran without a Kubernetes Job", i, r.job)
		}
		jobIDs[strconv.FormatInt(r.job, 10)] = i
		launched = append(launched, r.started.Sub(r.queued))
		claimed = append(claimed, r.claimed.Sub(r.queued))
		firstLine = append(firstLine, r.firstLine.Sub(r.queued))
		result = append(result, r.result.Sub(r.queued))
		ended = append(ended, r.ended.Sub(r.queued))
		lag = append(lag, r.ended.Sub(r.result))
		if first.IsZero() || r.queued.Before(first) {
			first = r.queued
		}
		if r.ended.After(last) {
			last = r.ended
		}
	}
	// Let the last watches end before counting.
	time.Sleep(200 * time.Millisecond)
	reqs := k.srv.Recorded()[from:]
	t := tally(reqs)

	// 0 run twice: one Job created per plan job, attempt 1.
	if t["create jobs"] != pulls {
		b.Fatalf("%d create requests of Jobs for %d plans", t["create jobs"], pulls)
	}
	jw.mu.Lock()
	for id, names := range jw.byJob {
		if _, ok := jobIDs[id]; !ok || len(names) != 1 || jw.attempt[names[0]] != "1" {
			jw.mu.Unlock()
			b.Fatalf("Jobs of atoll job %s (#%d): %v", id, jobIDs[id], names)
		}
	}
	if len(jw.byJob) != pulls {
		jw.mu.Unlock()
		b.Fatalf("Jobs for %d atoll jobs, want %d", len(jw.byJob), pulls)
	}
	peak := jw.peak
	jw.mu.Unlock()

	b.ReportMetric(wall.Seconds(), "wall-s")
	b.ReportMetric(last.Sub(first).Seconds(), "first-queued-to-last-ended-s")
	b.ReportMetric(float64(len(reqs))/float64(pulls), "api-calls/plan")
	b.ReportMetric(float64(peak), "peak-active-jobs")
	reportTail(b, "launched", launched)
	reportTail(b, "claimed", claimed)
	reportTail(b, "first-line", firstLine)
	reportTail(b, "result", result)
	reportTail(b, "ended", ended)
	reportTail(b, "result-to-ended", lag)
	b.Logf("%d plans in %v (first queued → last ended %v); Kubernetes API requests: %d (%s); peak %d unfinished Jobs",
		pulls, wall.Round(time.Millisecond), last.Sub(first).Round(time.Millisecond), len(reqs), formatTally(t), peak)

	// Cleaned up: no Job, pod or Secret once the TTL ran out.
	commented := time.Now()
	client := k.srv.Client()
	left := func() (jobs, pods, secrets int) {
		ctx := context.Background()
		jl, err1 := client.BatchV1().Jobs(kubeNamespace).List(ctx, metav1.ListOptions{})
		pl, err2 := client.CoreV1().Pods(kubeNamespace).List(ctx, metav1.ListOptions{})
		sl, err3 := client.CoreV1().Secrets(kubeNamespace).List(ctx, metav1.ListOptions{})
		if err1 != nil || err2 != nil || err3 != nil {
			b.Fatalf("list: %v %v %v", err1, err2, err3)
		}
		return len(jl.Items), len(pl.Items), len(sl.Items)
	}
	deadline := time.Now().Add(time.Minute)
	for {
		j, p, s := left()
		if j+p+s == 0 {
			break
		}
		if time.Now().After(deadline) {
			b.Fatalf("a minute after the plans were checked: %d Jobs, %d pods, %d Secrets left; the Secrets: %s", j, p, s, leftSecrets(b, k))
		}
		time.Sleep(100 * time.Millisecond)
	}
	cleanup := time.Since(commented)
	k.checkNoLeaks(b)
	b.Logf("every Job, pod and Secret gone %v after the plans were checked", cleanup.Round(time.Millisecond))
}

// leftSecrets says of each Secret left whether the Job it names as its
// owner exists: an ownerReference written after its owner was deleted
// leaves the Secret to a garbage collector's dangling-owner pass, which
// the fake does not have.
func leftSecrets(b testing.TB, k *kubeCluster) string {
	list, err := k.srv.Client().CoreV1().Secrets(kubeNamespace).List(context.Background(), metav1.ListOptions{})
	if err != nil {
		b.Fatal(err)
	}
	dangling, unowned, owned := 0, 0, 0
	var names []string
	for _, sec := range list.Items {
		names = append(names, sec.Name)
		switch {
		case len(sec.OwnerReferences) == 0:
			unowned++
		case slices.ContainsFunc(sec.OwnerReferences, func(r metav1.OwnerReference) bool {
			j, ok := k.srv.Object("jobs", kubeNamespace, r.Name).(*batchv1.Job)
			return ok && j.UID == r.UID
		}):
			owned++
		default:
			dangling++
		}
	}
	return fmt.Sprintf("%d owned by a Job that exists, %d by a Job deleted before (dangling), %d by none: %v", owned, dangling, unowned, names)
}
