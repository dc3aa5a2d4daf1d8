package main_test

// The process harness of the failover tests: real atoll processes forming
// an active/standby pair over a shared replica (in-process S3 or a file://
// directory), with the fake GitHub and a real git repository. Nodes are
// killed, frozen and stopped with real signals.

import (
	"bytes"
	"context"
	"database/sql"
	"encoding/json"
	"fmt"
	"io"
	"net"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"

	_ "modernc.org/sqlite"

	"github.com/atollhq/atoll"
	"github.com/atollhq/atoll/replica/s3test"
)

// The atoll binary, built once per test binary (not race-built: the
// children need not be).
var (
	atollBinOnce sync.Once
	atollBinDir  string
	atollBinPath string
	atollBinErr  error
)

// TestMain removes the binary the tests built.
func TestMain(m *testing.M) {
	code := m.Run()
	if atollBinDir != "" {
		os.RemoveAll(atollBinDir)
	}
	os.Exit(code)
}

// atollBinary builds the atoll command once and returns its path.
func atollBinary(t testing.TB) string {
	t.Helper()
	atollBinOnce.Do(func() {
		dir, err := os.MkdirTemp("", "atoll-bin-")
		if err != nil {
			atollBinErr = err
			return
		}
		atollBinDir = dir
		bin := filepath.Join(dir, "atoll")
		if out, err := exec.Command("go", "build", "-o", bin, ".").CombinedOutput(); err != nil {
			atollBinErr = fmt.Errorf("go build: %v\n%s", err, out)
			return
		}
		atollBinPath = bin
	})
	if atollBinErr != nil {
		t.Fatal(atollBinErr)
	}
	return atollBinPath
}

// haTTL is the lease TTL the failover tests run nodes with.
const haTTL = 2 * time.Second

// haCluster is what the nodes of a pair share: the replica, the fake
// GitHub, the git repository, and a data dir and port per node id.
type haCluster struct {
	t   testing.TB
	Bin string

	ReplicaURL  string
	ReplicaKind string         // "s3" or "file"
	S3          *s3test.Server // the in-process S3 server of an "s3" replica
	replicaEnv  []string       // ATOLL_REPLICA_* for `atoll restore`
	replicaArgs []string       // --replica-access-key-id ... for the server

	GH       *fakeGitHub
	Repo     *gitRepo
	CloneURL string
	Base     string // the main branch's head

	TTL       time.Duration
	ExtraArgs []string // appended to every node's command line

	root  string
	mu    sync.Mutex
	ports map[string]int
	nodes []*haNode // every process started, for cleanup and log dumps
}

// newHACluster starts the shared parts: replica is "s3" (an in-process S3
// server) or "file" (a directory). files is the repository's first commit.
func newHACluster(t testing.TB, replicaKind string, files map[string]string) *haCluster {
	t.Helper()
	testEnv(t)
	c := &haCluster{t: t, Bin: atollBinary(t), ReplicaKind: replicaKind, TTL: haTTL, root: t.TempDir(), ports: map[string]int{}}
	c.GH = newFakeGitHub(t)
	c.Repo = newGitRepo(t, files)
	c.Base = c.Repo.git("rev-parse", "main")
	c.CloneURL, _ = serveGit(t, c.Repo, "gh-test-token")
	switch replicaKind {
	case "s3":
		srv := s3test.New(t)
		c.S3 = srv
		c.ReplicaURL = srv.URL("atoll")
		c.replicaArgs = []string{"--replica-access-key-id", s3test.AccessKeyID, "--replica-secret-access-key", s3test.SecretAccessKey}
		c.replicaEnv = []string{"ATOLL_REPLICA_ACCESS_KEY_ID=" + s3test.AccessKeyID, "ATOLL_REPLICA_SECRET_ACCESS_KEY=" + s3test.SecretAccessKey}
	case "file":
		dir := filepath.Join(c.root, "replica")
		if err := os.MkdirAll(dir, 0o755); err != nil {
			t.Fatal(err)
		}
		c.ReplicaURL = "file://" + dir
	default:
		t.Fatalf("unknown replica kind %q", replicaKind)
	}
	// Registered after the servers above: it runs before they close.
	t.Cleanup(c.cleanup)
	return c
}

// DataDir is node id's data dir; it stays the same across restarts.
func (c *haCluster) DataDir(id string) string { return filepath.Join(c.root, "node-"+id) }

// port returns node id's port, picked once: the advertise URL must be known
// before the node listens, and stay the same across restarts.
func (c *haCluster) port(id string) int {
	c.mu.Lock()
	defer c.mu.Unlock()
	if p, ok := c.ports[id]; ok {
		return p
	}
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		c.t.Fatal(err)
	}
	p := l.Addr().(*net.TCPAddr).Port
	l.Close()
	c.ports[id] = p
	return p
}

// URL is node id's advertise URL.
func (c *haCluster) URL(id string) string { return "http://127.0.0.1:" + strconv.Itoa(c.port(id)) }

func (c *haCluster) cleanup() {
	c.mu.Lock()
	nodes := append([]*haNode(nil), c.nodes...)
	c.mu.Unlock()
	for _, n := range nodes {
		n.signal(syscall.SIGKILL) // frozen (SIGSTOP) ones too
		select {
		case <-n.done:
		case <-time.After(10 * time.Second):
		}
	}
	// ATOLL_TEST_HA_LOGS=1 shows them for passing tests too.
	if c.t.Failed() || os.Getenv("ATOLL_TEST_HA_LOGS") != "" {
		c.dumpLogs()
	}
}

// dumpLogs shows the end of each node's log (stderr and stdout of every
// process it ran, in order).
func (c *haCluster) dumpLogs() {
	seen := map[string]bool{}
	c.mu.Lock()
	nodes := append([]*haNode(nil), c.nodes...)
	c.mu.Unlock()
	for _, n := range nodes {
		if seen[n.logPath] {
			continue
		}
		seen[n.logPath] = true
		b, err := os.ReadFile(n.logPath)
		if err != nil {
			c.t.Logf("node %s log: %v", n.ID, err)
			continue
		}
		const keep = 48 << 10
		if len(b) > keep {
			b = append([]byte("…\n"), b[len(b)-keep:]...)
		}
		c.t.Logf("=== node %s log (%s) ===\n%s", n.ID, n.logPath, b)
	}
}

// haNode is one atoll process of the pair. A restart is a new haNode with
// the same ID, URL and data dir.
type haNode struct {
	ID, URL, DataDir string
	c                *haCluster
	cmd              *exec.Cmd
	logPath          string
	started          time.Time

	done     chan struct{} // closed when the process exited
	exitCode int           // -1 when killed by a signal
}

// startNode starts node id (as a standby: every node does) and returns once
// it answers /healthz. extra flags are appended to the command line.
func startNode(t testing.TB, c *haCluster, id string, extra ...string) *haNode {
	t.Helper()
	n := &haNode{ID: id, URL: c.URL(id), DataDir: c.DataDir(id), c: c, done: make(chan struct{}),
		logPath: filepath.Join(c.root, "node-"+id+".log")}
	args := []string{"server",
		"--addr", "127.0.0.1:" + strconv.Itoa(c.port(id)),
		"--data-dir", n.DataDir,
		"--terraform-bin", terraformBin(t),
		"--log-level", "info",
		"--gh-token", "gh-test-token", "--gh-user", "atoll-bot", "--gh-webhook-secret", webhookSecret,
		// Through the node's own prefix: the fake records who wrote.
		"--gh-api-url", c.GH.URL + "/via/" + id + "/",
		"--repo-allowlist", "github.com/acme/*",
		"--api-secret", "api-secret-for-tests",
		"--parallelism", "4",
		"--stop-timeout", "30s",
		"--replica-url", c.ReplicaURL,
		"--advertise-url", n.URL,
		"--node-id", id,
		"--lease-ttl", c.TTL.String(),
	}
	args = append(args, c.replicaArgs...)
	args = append(args, c.ExtraArgs...)
	args = append(args, extra...)
	logFile, err := os.OpenFile(n.logPath, os.O_CREATE|os.O_WRONLY|os.O_APPEND, 0o644)
	if err != nil {
		t.Fatal(err)
	}
	fmt.Fprintf(logFile, "=== %s: start %s ===\n", time.Now().Format(time.RFC3339Nano), id)
	n.cmd = exec.Command(c.Bin, args...)
	n.cmd.Env = append(os.Environ(), "CHECKPOINT_DISABLE=1")
	n.cmd.Stdout, n.cmd.Stderr = logFile, logFile
	// The child dies with the test binary.
	n.cmd.SysProcAttr = &syscall.SysProcAttr{Pdeathsig: syscall.SIGKILL}
	if err := n.cmd.Start(); err != nil {
		logFile.Close()
		t.Fatal(err)
	}
	n.started = time.Now()
	c.mu.Lock()
	c.nodes = append(c.nodes, n)
	c.mu.Unlock()
	go func() {
		n.cmd.Wait()
		n.exitCode = n.cmd.ProcessState.ExitCode()
		fmt.Fprintf(logFile, "=== %s: %s exited: %s ===\n", time.Now().Format(time.RFC3339Nano), id, n.cmd.ProcessState)
		logFile.Close()
		close(n.done)
	}()
	deadline := time.Now().Add(30 * time.Second)
	for {
		if n.exited() {
			t.Fatalf("node %s exited at start (code %d):\n%s", id, n.exitCode, n.log())
		}
		if resp, err := haClient.Get(n.URL + "/healthz"); err == nil {
			resp.Body.Close()
			if resp.StatusCode == http.StatusOK {
				return n
			}
		}
		if time.Now().After(deadline) {
			t.Fatalf("node %s did not answer /healthz in 30s:\n%s", id, n.log())
		}
		time.Sleep(20 * time.Millisecond)
	}
}

// haClient gives up on a node that does not answer (frozen, dead).
var haClient = &http.Client{Timeout: 5 * time.Second, Transport: authTransport{testAPISecret}}

func (n *haNode) signal(sig syscall.Signal) error {
	if n.cmd == nil || n.cmd.Process == nil || n.exited() {
		return nil
	}
	return n.cmd.Process.Signal(sig)
}

func (n *haNode) exited() bool {
	select {
	case <-n.done:
		return true
	default:
		return false
	}
}

// kill9 kills the process at once (its Terraform children die with it:
// Pdeathsig) and waits for it to be gone.
func (n *haNode) kill9(t testing.TB) {
	t.Helper()
	if err := n.signal(syscall.SIGKILL); err != nil {
		t.Fatalf("kill -9 %s: %v", n.ID, err)
	}
	n.waitExit(t, 10*time.Second)
}

// sigstop freezes the process; sigcont resumes it.
func (n *haNode) sigstop(t *testing.T) {
	t.Helper()
	if err := n.signal(syscall.SIGSTOP); err != nil {
		t.Fatalf("SIGSTOP %s: %v", n.ID, err)
	}
}

func (n *haNode) sigcont(t *testing.T) {
	t.Helper()
	if err := n.signal(syscall.SIGCONT); err != nil {
		t.Fatalf("SIGCONT %s: %v", n.ID, err)
	}
}

// sigterm asks for a graceful stop; waitExit waits for it.
func (n *haNode) sigterm(t testing.TB) {
	t.Helper()
	if err := n.signal(syscall.SIGTERM); err != nil {
		t.Fatalf("SIGTERM %s: %v", n.ID, err)
	}
}

// waitExit waits for the process to exit and returns its exit code (-1:
// killed by a signal).
func (n *haNode) waitExit(t testing.TB, timeout time.Duration) int {
	t.Helper()
	select {
	case <-n.done:
		return n.exitCode
	case <-time.After(timeout):
		t.Fatalf("node %s did not exit within %s", n.ID, timeout)
		return 0
	}
}

// status is the node's own /api/v1/status.
func (n *haNode) status() (atoll.NodeStatus, error) {
	var st atoll.NodeStatus
	resp, err := haClient.Get(n.URL + "/api/v1/status")
	if err != nil {
		return st, err
	}
	defer resp.Body.Close()
	body, _ := io.ReadAll(resp.Body)
	if resp.StatusCode != http.StatusOK {
		return st, fmt.Errorf("status %s: %d %s", n.ID, resp.StatusCode, body)
	}
	if err := json.Unmarshal(body, &st); err != nil {
		return st, fmt.Errorf("status %s: %w: %s", n.ID, err, body)
	}
	return st, nil
}

// readyz is the status code of the node's /readyz (0: no answer).
func (n *haNode) readyz() int {
	resp, err := haClient.Get(n.URL + "/readyz")
	if err != nil {
		return 0
	}
	resp.Body.Close()
	return resp.StatusCode
}

// isActive reports whether the node says it is the ready active node and
// /readyz agrees.
func (n *haNode) isActive() bool {
	if n.exited() {
		return false
	}
	st, err := n.status()
	return err == nil && st.Role == atoll.RoleActive && st.Ready && n.readyz() == http.StatusOK
}

// log is the node's log so far.
func (n *haNode) log() string {
	b, _ := os.ReadFile(n.logPath)
	return string(b)
}

// waitActive waits until one of nodes is the ready active node and returns
// it; it fails the test after timeout.
func waitActive(t testing.TB, timeout time.Duration, nodes ...*haNode) *haNode {
	t.Helper()
	deadline := time.Now().Add(timeout)
	for {
		for _, n := range nodes {
			if n.isActive() {
				return n
			}
		}
		if time.Now().After(deadline) {
			var states []string
			for _, n := range nodes {
				st, err := n.status()
				states = append(states, fmt.Sprintf("%s: %+v %v exited=%v", n.ID, st, err, n.exited()))
			}
			t.Fatalf("no active node within %s: %s", timeout, strings.Join(states, "; "))
		}
		time.Sleep(20 * time.Millisecond)
	}
}

// waitStandbyOf waits until n is a standby that names active as the active
// node (so it forwards there).
func waitStandbyOf(t testing.TB, timeout time.Duration, n, active *haNode) {
	t.Helper()
	var st atoll.NodeStatus
	var err error
	deadline := time.Now().Add(timeout)
	for time.Now().Before(deadline) {
		st, err = n.status()
		if err == nil && st.Role == atoll.RoleStandby && st.ActiveNode == active.ID && st.ActiveURL == active.URL {
			return
		}
		time.Sleep(20 * time.Millisecond)
	}
	t.Fatalf("%s is not a standby of %s within %s: %+v %v", n.ID, active.ID, timeout, st, err)
}

// getJSONFrom is getJSON that reports errors instead of failing: for nodes
// that may be gone.
func getJSONFrom(url string, v any) (int, error) {
	resp, err := haClient.Get(url)
	if err != nil {
		return 0, err
	}
	defer resp.Body.Close()
	body, _ := io.ReadAll(resp.Body)
	if resp.StatusCode != http.StatusOK {
		return resp.StatusCode, fmt.Errorf("GET %s: %d %s", url, resp.StatusCode, body)
	}
	return resp.StatusCode, json.Unmarshal(body, v)
}

// payloadBody builds a webhook body from a fixture, as webhook()
// does, without failing the test (for use in goroutines).
func payloadBody(fixtureName string, edit func(map[string]any)) ([]byte, error) {
	raw, err := os.ReadFile(fixture(fixtureName))
	if err != nil {
		return nil, err
	}
	var payload map[string]any
	if err := json.Unmarshal(raw, &payload); err != nil {
		return nil, err
	}
	if edit != nil {
		edit(payload)
	}
	return json.Marshal(payload)
}

// delivery is one webhook delivery: its id stays the same across retries,
// as GitHub's redelivery keeps it.
type delivery struct {
	ID    string
	Event string
	Body  []byte
	Tag   string // what the test looks for: a comment's marker, a pull's number
	Pull  int
}

func newDelivery(event, fixtureName string, edit func(map[string]any)) (delivery, error) {
	body, err := payloadBody(fixtureName, edit)
	return delivery{ID: fmt.Sprintf("delivery-%d-%d", time.Now().UnixNano(), deliveries.Add(1)), Event: event, Body: body}, err
}

// send posts the delivery to url and returns the status (0 and the error
// when the node did not answer).
func (d delivery) send(url string) (int, error) { return d.sendWith(haClient, url) }

// sendWith is send with client.
func (d delivery) sendWith(client *http.Client, url string) (int, error) {
	req, err := http.NewRequest("POST", url+"/events", bytes.NewReader(d.Body))
	if err != nil {
		return 0, err
	}
	req.Header.Set("Content-Type", "application/json")
	req.Header.Set("X-GitHub-Event", d.Event)
	req.Header.Set("X-GitHub-Delivery", d.ID)
	req.Header.Set("X-Hub-Signature-256", sign(d.Body, webhookSecret))
	resp, err := client.Do(req)
	if err != nil {
		return 0, err
	}
	io.Copy(io.Discard, resp.Body)
	resp.Body.Close()
	return resp.StatusCode, nil
}

// commentDelivery is an issue_comment webhook carrying body on pull number.
func (c *haCluster) commentDelivery(t *testing.T, number int, body string) delivery {
	t.Helper()
	d, err := newDelivery("issue_comment", "issue_comment.created.json", commentEvent(c.CloneURL, number, body))
	if err != nil {
		t.Fatal(err)
	}
	return d
}

// openPull pushes a branch changing files, tells the fake GitHub about pull
// number, and returns the opened webhook (not yet sent) and the head.
func (c *haCluster) openPull(t *testing.T, number int, branch string, files map[string]string, changed ...string) (delivery, string) {
	t.Helper()
	sha := c.Repo.branch(branch, files)
	c.GH.setPull(number, fakePull{HeadSHA: sha, HeadRef: branch, BaseSHA: c.Base, BaseRef: "main", Files: changed})
	d, err := newDelivery("pull_request", "pull_request.opened.json", pullEvent(c.CloneURL, number, "opened", branch, sha, c.Base))
	if err != nil {
		t.Fatal(err)
	}
	return d, sha
}

// mustSend sends d to url and fails unless it is answered 200.
func mustSend(t *testing.T, url string, d delivery) {
	t.Helper()
	code, err := d.send(url)
	if err != nil || code != http.StatusOK {
		t.Fatalf("webhook %s to %s: %d %v", d.Event, url, code, err)
	}
}

// restore restores the replica with `atoll restore` into a new file and
// opens it: what a node promoted now would start from.
func (c *haCluster) restore(t testing.TB) *sql.DB {
	t.Helper()
	out := filepath.Join(t.TempDir(), "restored.db")
	ctx, cancel := context.WithTimeout(context.Background(), 60*time.Second)
	defer cancel()
	cmd := exec.CommandContext(ctx, c.Bin, "restore", "--replica-url", c.ReplicaURL, "--output", out)
	cmd.Env = append(os.Environ(), c.replicaEnv...)
	if b, err := cmd.CombinedOutput(); err != nil {
		t.Fatalf("atoll restore: %v\n%s", err, b)
	}
	db, err := sql.Open("sqlite", out)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { db.Close() })
	return db
}

// deliveryIDs are the webhook delivery ids recorded in db.
func deliveryIDs(t testing.TB, db *sql.DB) map[string]bool {
	t.Helper()
	rows, err := db.Query(`SELECT delivery_id FROM webhooks`)
	if err != nil {
		t.Fatal(err)
	}
	defer rows.Close()
	ids := map[string]bool{}
	for rows.Next() {
		var id string
		if err := rows.Scan(&id); err != nil {
			t.Fatal(err)
		}
		ids[id] = true
	}
	if err := rows.Err(); err != nil {
		t.Fatal(err)
	}
	return ids
}

// queryInt runs a query returning one integer.
func queryInt(t *testing.T, db *sql.DB, q string, args ...any) int64 {
	t.Helper()
	var n int64
	if err := db.QueryRow(q, args...).Scan(&n); err != nil {
		t.Fatalf("%s: %v", q, err)
	}
	return n
}

// streamResult is what happened to one delivery of a webhookStream.
type streamResult struct {
	D        delivery
	Targets  []string        // the URL of each attempt
	Codes    []int           // the status of each attempt (0: no answer)
	Errs     []string        // why an attempt got no answer
	Times    []time.Duration // when each attempt was answered, from SentAt
	OK       bool            // an attempt got a 2xx
	SentAt   time.Time
	AnswerAt time.Time // of the 2xx
}

// firstFailed reports whether the first attempt got no 2xx.
func (r *streamResult) firstFailed() bool {
	return len(r.Codes) > 0 && (r.Codes[0] < 200 || r.Codes[0] > 299)
}

// webhookStream sends a delivery every Interval, alternating between URLs,
// each in its own goroutine as GitHub sends them. A delivery that gets no
// 2xx is sent again (same delivery id, to the next URL) up to Retries times
// with doubling backoff, as an operator's redelivery would.
type webhookStream struct {
	URLs     []string
	Interval time.Duration
	Retries  int
	Backoff  time.Duration                 // the first retry's wait (250ms if zero)
	Next     func(i int) (delivery, error) // the i-th delivery

	mu      sync.Mutex
	results []*streamResult
	errs    []error
	stop    chan struct{}
	wg      sync.WaitGroup
}

// start runs the stream until stop.
func (s *webhookStream) start() *webhookStream {
	if s.Backoff <= 0 {
		s.Backoff = 250 * time.Millisecond
	}
	s.stop = make(chan struct{})
	s.wg.Add(1)
	go func() {
		defer s.wg.Done()
		tick := time.NewTicker(s.Interval)
		defer tick.Stop()
		for i := 0; ; i++ {
			d, err := s.Next(i)
			if err != nil {
				s.mu.Lock()
				s.errs = append(s.errs, err)
				s.mu.Unlock()
				return
			}
			r := &streamResult{D: d, SentAt: time.Now()}
			s.mu.Lock()
			s.results = append(s.results, r)
			s.mu.Unlock()
			s.wg.Add(1)
			go func() {
				defer s.wg.Done()
				s.deliver(r, i)
			}()
			select {
			case <-tick.C:
			case <-s.stop:
				return
			}
		}
	}()
	return s
}

func (s *webhookStream) deliver(r *streamResult, i int) {
	wait := s.Backoff
	for attempt := 0; attempt <= s.Retries; attempt++ {
		if attempt > 0 {
			time.Sleep(wait)
			wait *= 2
		}
		url := s.URLs[(i+attempt)%len(s.URLs)]
		code, err := r.D.send(url)
		s.mu.Lock()
		r.Targets, r.Codes = append(r.Targets, url), append(r.Codes, code)
		r.Times = append(r.Times, time.Since(r.SentAt).Round(time.Millisecond))
		if err != nil {
			r.Errs = append(r.Errs, err.Error())
		}
		if code >= 200 && code <= 299 {
			r.OK, r.AnswerAt = true, time.Now()
		}
		ok := r.OK
		s.mu.Unlock()
		if ok {
			return
		}
	}
}

// finish stops the stream, waits for every delivery's last attempt, and
// returns the results in sending order.
func (s *webhookStream) finish(t testing.TB) []*streamResult {
	t.Helper()
	close(s.stop)
	s.wg.Wait()
	s.mu.Lock()
	defer s.mu.Unlock()
	for _, err := range s.errs {
		t.Errorf("webhook stream: %v", err)
	}
	return s.results
}

// snapshot returns a copy of the results so far.
func (s *webhookStream) snapshot() []streamResult {
	s.mu.Lock()
	defer s.mu.Unlock()
	out := make([]streamResult, len(s.results))
	for i, r := range s.results {
		out[i] = *r
		out[i].Targets = append([]string(nil), r.Targets...)
		out[i].Codes = append([]int(nil), r.Codes...)
		out[i].Errs = append([]string(nil), r.Errs...)
		out[i].Times = append([]time.Duration(nil), r.Times...)
	}
	return out
}

// helpStream is a stream's deliveries: mostly "atlantis help s<i>" comments
// on pull commentPull (a cheap request, answered with a usage reply quoting
// s<i>), and every fourth a pull request opened at the base commit as
// number firstPull+i (an autoplan that checks the repository out and finds
// nothing to plan).
func (c *haCluster) helpStream(commentPull, firstPull int) func(i int) (delivery, error) {
	return func(i int) (delivery, error) {
		if i%4 == 3 {
			n := firstPull + i
			c.GH.setPull(n, fakePull{HeadSHA: c.Base, HeadRef: "main", BaseSHA: c.Base, BaseRef: "main"})
			d, err := newDelivery("pull_request", "pull_request.opened.json", pullEvent(c.CloneURL, n, "opened", "main", c.Base, c.Base))
			d.Pull = n
			return d, err
		}
		tag := fmt.Sprintf("s%d", i)
		d, err := newDelivery("issue_comment", "issue_comment.created.json", commentEvent(c.CloneURL, commentPull, "atlantis help "+tag))
		d.Tag, d.Pull = tag, commentPull
		return d, err
	}
}

// checkDelivered fails unless every delivery that got a 2xx is recorded in
// db (a restore of the replica) with its request, and returns how many.
func checkDelivered(t *testing.T, db *sql.DB, results []*streamResult) int {
	t.Helper()
	ids := deliveryIDs(t, db)
	n := 0
	for _, r := range results {
		if !r.OK {
			continue
		}
		n++
		if !ids[r.D.ID] {
			t.Errorf("delivery %s (%s) was acknowledged (%v to %v) but is not in the replica", r.D.ID, r.D.Event, r.Codes, r.Targets)
		}
	}
	return n
}
