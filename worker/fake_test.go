package worker

import (
	"context"
	"encoding/json"
	"log/slog"
	"net/http"
	"net/http/cgi"
	"net/http/httptest"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/atollhq/atoll"
	"github.com/atollhq/atoll/runner/executor"
)

// fakePlane is a control plane speaking the worker protocol's wire
// format, with knobs for the failures the tests need. It serves the git
// repository of its jobs with git http-backend.
type fakePlane struct {
	t      *testing.T
	srv    *httptest.Server
	secret string
	repo   string // bare repository served to every job
	head   string // its main branch's commit

	mu          sync.Mutex
	queue       []*atoll.WorkerAssignment
	claimStatus int // answer claims with this error status
	hbStatus    int // answer heartbeats with this error status
	heartbeats  int
	failLogs    int // answer the next logs posts 503
	logDelay    time.Duration
	logPosts    [][]atoll.WorkerLogLine // every post received, refused ones too
	logs        map[int64]atoll.WorkerLogLine
	results     map[int64]atoll.WorkerResult
	plan        []byte
	refuseApply string   // answer applying with this 400
	gitAuth     []string // Authorization headers of git calls
}

func newFakePlane(t *testing.T) *fakePlane {
	t.Helper()
	p := &fakePlane{t: t, secret: "wtok-SECRET-1234", logs: map[int64]atoll.WorkerLogLine{}, results: map[int64]atoll.WorkerResult{}}
	p.repo, p.head = gitRepo(t)
	mux := http.NewServeMux()
	mux.HandleFunc("POST /api/v1/workers/claim", p.claim)
	mux.HandleFunc("POST /api/v1/workers/jobs/{id}/heartbeat", p.jobCall(p.heartbeat))
	mux.HandleFunc("POST /api/v1/workers/jobs/{id}/logs", p.jobCall(p.postLogs))
	mux.HandleFunc("POST /api/v1/workers/jobs/{id}/applying", p.jobCall(func(w http.ResponseWriter, r *http.Request, id int64) {
		p.mu.Lock()
		refuse := p.refuseApply
		p.mu.Unlock()
		if refuse != "" {
			errorJSON(w, http.StatusBadRequest, refuse)
			return
		}
		w.WriteHeader(http.StatusNoContent)
	}))
	mux.HandleFunc("GET /api/v1/workers/jobs/{id}/plan", p.jobCall(func(w http.ResponseWriter, r *http.Request, id int64) {
		p.mu.Lock()
		defer p.mu.Unlock()
		w.Write(p.plan)
	}))
	mux.HandleFunc("POST /api/v1/workers/jobs/{id}/result", p.jobCall(p.result))
	mux.HandleFunc("/api/v1/workers/jobs/{id}/git/", p.jobCall(p.git))
	p.srv = httptest.NewServer(mux)
	t.Cleanup(p.srv.Close)
	return p
}

func jobToken(id int64) string { return "jtok-" + strconv.FormatInt(id, 10) + "-SECRET" }

func errorJSON(w http.ResponseWriter, status int, msg string) {
	w.Header().Set("Content-Type", "application/json")
	w.WriteHeader(status)
	json.NewEncoder(w).Encode(map[string]string{"error": msg})
}

// enqueue adds a job whose spec runs steps as an import.
func (p *fakePlane) enqueue(id int64, steps []atoll.Step, lease int) {
	p.enqueueKind(id, atoll.JobImport, steps, lease, "")
}

// enqueueKind adds a job of kind running steps (its import or apply
// steps); planSHA is an apply's.
func (p *fakePlane) enqueueKind(id int64, kind string, steps []atoll.Step, lease int, planSHA string) {
	js := atoll.JobSpec{ImportSteps: steps}
	if kind == atoll.JobApply {
		js = atoll.JobSpec{ApplySteps: steps}
	}
	spec := executor.Spec{
		Job:      executor.Job{ID: id, Kind: kind, Repo: "acme/infra", Pull: 1, Dir: ".", Workspace: "default", HeadSHA: p.head, Spec: js},
		Checkout: executor.Checkout{Host: "example.com", Owner: "acme", Name: "infra", Pull: 1, Workspace: "default", HeadSHA: p.head},
		// The server's binary and credential helper: never used.
		Terraform: executor.Terraform{Bin: "/server/terraform", RunEnv: []string{"SERVER_RUN_ENV=1"}},
	}
	b, err := json.Marshal(spec)
	if err != nil {
		p.t.Fatal(err)
	}
	p.mu.Lock()
	defer p.mu.Unlock()
	p.queue = append(p.queue, &atoll.WorkerAssignment{JobID: id, JobToken: jobToken(id), LeaseSeconds: lease, Attempt: 1, Spec: b, PlanSHA256: planSHA})
}

func (p *fakePlane) claim(w http.ResponseWriter, r *http.Request) {
	if r.Header.Get("Authorization") != "Bearer "+p.secret {
		errorJSON(w, http.StatusUnauthorized, "unknown worker token")
		return
	}
	var hello atoll.WorkerHello
	if err := json.NewDecoder(r.Body).Decode(&hello); err != nil || hello.Protocol != atoll.WorkerProtocol || hello.Pool == "" {
		errorJSON(w, http.StatusBadRequest, "bad hello")
		return
	}
	p.mu.Lock()
	status := p.claimStatus
	var a *atoll.WorkerAssignment
	if status == 0 && len(p.queue) > 0 {
		a, p.queue = p.queue[0], p.queue[1:]
	}
	p.mu.Unlock()
	switch {
	case status != 0:
		errorJSON(w, status, "claim refused by the test")
	case a == nil:
		// A short long-poll: the tests need no 30 s waits.
		select {
		case <-time.After(50 * time.Millisecond):
		case <-r.Context().Done():
		}
		w.WriteHeader(http.StatusNoContent)
	default:
		json.NewEncoder(w).Encode(a)
	}
}

// jobCall checks the job token of a job call.
func (p *fakePlane) jobCall(h func(http.ResponseWriter, *http.Request, int64)) http.HandlerFunc {
	return func(w http.ResponseWriter, r *http.Request) {
		id, _ := strconv.ParseInt(r.PathValue("id"), 10, 64)
		if r.Header.Get("Authorization") != "Bearer "+jobToken(id) {
			errorJSON(w, http.StatusUnauthorized, "unknown job token")
			return
		}
		h(w, r, id)
	}
}

func (p *fakePlane) heartbeat(w http.ResponseWriter, r *http.Request, id int64) {
	p.mu.Lock()
	p.heartbeats++
	status := p.hbStatus
	p.mu.Unlock()
	if status != 0 {
		errorJSON(w, status, "the claim is no longer held")
		return
	}
	json.NewEncoder(w).Encode(atoll.WorkerLease{LeaseExpiresAt: time.Now().Add(time.Minute)})
}

func (p *fakePlane) postLogs(w http.ResponseWriter, r *http.Request, id int64) {
	var body struct {
		Lines []atoll.WorkerLogLine `json:"lines"`
	}
	if err := json.NewDecoder(r.Body).Decode(&body); err != nil || len(body.Lines) == 0 || len(body.Lines) > batchLines {
		errorJSON(w, http.StatusBadRequest, "bad batch")
		return
	}
	p.mu.Lock()
	p.logPosts = append(p.logPosts, body.Lines)
	fail, delay := p.failLogs > 0, p.logDelay
	if fail {
		p.failLogs--
	}
	p.mu.Unlock()
	if fail {
		errorJSON(w, http.StatusServiceUnavailable, "not now")
		return
	}
	time.Sleep(delay)
	p.mu.Lock()
	for _, l := range body.Lines {
		p.logs[l.Seq] = l
	}
	p.mu.Unlock()
	w.WriteHeader(http.StatusNoContent)
}

func (p *fakePlane) result(w http.ResponseWriter, r *http.Request, id int64) {
	var res atoll.WorkerResult
	if err := json.NewDecoder(r.Body).Decode(&res); err != nil {
		errorJSON(w, http.StatusBadRequest, "bad result")
		return
	}
	p.mu.Lock()
	p.results[id] = res
	p.mu.Unlock()
	w.WriteHeader(http.StatusNoContent)
}

// git serves the repository with git http-backend.
func (p *fakePlane) git(w http.ResponseWriter, r *http.Request, id int64) {
	p.mu.Lock()
	p.gitAuth = append(p.gitAuth, r.Header.Get("Authorization"))
	p.mu.Unlock()
	out, err := exec.Command("git", "--exec-path").Output()
	if err != nil {
		p.t.Errorf("git --exec-path: %v", err)
		return
	}
	h := &cgi.Handler{
		Path: filepath.Join(strings.TrimSpace(string(out)), "git-http-backend"),
		Root: "/api/v1/workers/jobs/" + strconv.FormatInt(id, 10) + "/git",
		Env:  []string{"GIT_PROJECT_ROOT=" + filepath.Dir(p.repo), "GIT_HTTP_EXPORT_ALL=1"},
	}
	// PATH_INFO names the repository under GIT_PROJECT_ROOT.
	r.URL.Path = h.Root + "/" + filepath.Base(p.repo) + strings.TrimPrefix(r.URL.Path, h.Root)
	h.ServeHTTP(w, r)
}

// lines returns the stored log lines' texts in order.
func (p *fakePlane) lines() []string {
	p.mu.Lock()
	defer p.mu.Unlock()
	return p.linesLocked()
}

func (p *fakePlane) linesLocked() []string {
	var out []string
	for seq := int64(1); ; seq++ {
		l, ok := p.logs[seq]
		if !ok {
			return out
		}
		out = append(out, l.Text)
	}
}

// gitRepo makes a bare repository with one commit on main.
func gitRepo(t *testing.T) (bare, head string) {
	t.Helper()
	dir := t.TempDir()
	src, bare := filepath.Join(dir, "src"), filepath.Join(dir, "infra.git")
	run := func(dir string, args ...string) string {
		cmd := exec.Command("git", args...)
		cmd.Dir = dir
		cmd.Env = append(os.Environ(), "GIT_CONFIG_GLOBAL=/dev/null", "GIT_CONFIG_NOSYSTEM=1",
			"GIT_AUTHOR_NAME=t", "GIT_AUTHOR_EMAIL=t@t", "GIT_COMMITTER_NAME=t", "GIT_COMMITTER_EMAIL=t@t")
		out, err := cmd.CombinedOutput()
		if err != nil {
			t.Fatalf("git %v: %v: %s", args, err, out)
		}
		return strings.TrimSpace(string(out))
	}
	os.MkdirAll(src, 0o755)
	run(src, "init", "-q", "-b", "main")
	os.WriteFile(filepath.Join(src, "main.tf"), []byte("# nothing\n"), 0o644)
	run(src, "add", ".")
	run(src, "commit", "-qm", "one")
	run(dir, "clone", "-q", "--bare", src, bare)
	return bare, run(src, "rev-parse", "HEAD")
}

// fakeTerraform is a terraform that says it is 1.9.0 and does nothing.
func fakeTerraform(t *testing.T) string {
	t.Helper()
	bin := filepath.Join(t.TempDir(), "terraform")
	script := "#!/bin/sh\nif [ \"$1\" = version ]; then echo '{\"terraform_version\":\"1.9.0\"}'; fi\nexit 0\n"
	if err := os.WriteFile(bin, []byte(script), 0o755); err != nil {
		t.Fatal(err)
	}
	return bin
}

// newTestWorker is a worker of p with short timings.
func newTestWorker(t *testing.T, p *fakePlane, edit func(*Config)) *Worker {
	t.Helper()
	cfg := Config{Servers: []string{p.srv.URL}, Token: p.secret, Pool: "ci", Name: "w1", Concurrency: 1,
		DataDir: t.TempDir(), TerraformBin: fakeTerraform(t), Version: "test", RetryFor: 2 * time.Second,
		ClaimWait: time.Second, StopTimeout: time.Second, Logger: slog.New(slog.NewTextHandler(t.Output(), nil))}
	if edit != nil {
		edit(&cfg)
	}
	w, err := New(cfg)
	if err != nil {
		t.Fatal(err)
	}
	return w
}

// runFor runs w until it returns or d passes (then it fails the test).
func runFor(t *testing.T, w *Worker, ctx context.Context, d time.Duration) error {
	t.Helper()
	done := make(chan error, 1)
	go func() { done <- w.Run(ctx) }()
	select {
	case err := <-done:
		return err
	case <-time.After(d):
		t.Fatalf("the worker did not return within %s", d)
		return nil
	}
}
