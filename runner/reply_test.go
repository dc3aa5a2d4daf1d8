package runner_test

import (
	"context"
	"io"
	"log/slog"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/atollhq/atoll"
	"github.com/atollhq/atoll/command"
	"github.com/atollhq/atoll/demo"
	"github.com/atollhq/atoll/git"
	"github.com/atollhq/atoll/runner"
	"github.com/atollhq/atoll/runner/markdown"
	"github.com/atollhq/atoll/store"
	"github.com/atollhq/atoll/store/storetest"
	"github.com/atollhq/atoll/terraform"
	"github.com/atollhq/atoll/vcs"
	"github.com/atollhq/atoll/vcs/local"
)

// threaded is the local host made to thread its comments, as Azure DevOps
// does: it records whether each comment was a reply, and to which comment.
type threaded struct {
	*local.Provider
	mu       sync.Mutex
	posts    []post
	statuses []vcs.Status
}

type post struct{ replyTo, body string }

var _ vcs.Replier = (*threaded)(nil)

func (p *threaded) CreateComment(ctx context.Context, repo atoll.Repo, number int, body string) (string, error) {
	p.record(post{"", body})
	return p.Provider.CreateComment(ctx, repo, number, body)
}

func (p *threaded) ReplyComment(ctx context.Context, repo atoll.Repo, number int, replyTo, body string) (string, error) {
	p.record(post{replyTo, body})
	return p.Provider.CreateComment(ctx, repo, number, body)
}

func (p *threaded) SetStatus(ctx context.Context, repo atoll.Repo, sha string, st vcs.Status) error {
	p.mu.Lock()
	p.statuses = append(p.statuses, st)
	p.mu.Unlock()
	return p.Provider.SetStatus(ctx, repo, sha, st)
}

func (p *threaded) record(x post) {
	p.mu.Lock()
	defer p.mu.Unlock()
	p.posts = append(p.posts, x)
}

// since returns the comments posted after the first n.
func (p *threaded) since(n int) []post {
	p.mu.Lock()
	defer p.mu.Unlock()
	return append([]post(nil), p.posts[n:]...)
}

func testTerraform(t *testing.T) string {
	t.Helper()
	bin := os.Getenv("ATOLL_TEST_TERRAFORM")
	if bin == "" {
		bin, _ = filepath.Abs(filepath.Join("..", "bin", "terraform"))
	}
	if _, err := os.Stat(bin); err != nil {
		t.Skipf("terraform binary not available (%v); run make or set ATOLL_TEST_TERRAFORM", err)
	}
	return bin
}

// waitRequest waits until request id has ended.
func waitRequest(t *testing.T, db *store.DB, id int64) {
	t.Helper()
	deadline := time.Now().Add(3 * time.Minute)
	for {
		req, err := db.Request(context.Background(), id)
		if err != nil {
			t.Fatal(err)
		}
		if req.State != atoll.RequestQueued && req.State != atoll.RequestRunning {
			return
		}
		if time.Now().After(deadline) {
			t.Fatalf("request %d still %s", id, req.State)
		}
		time.Sleep(20 * time.Millisecond)
	}
}

// On a host that threads comments, the results of a command asked for in a
// comment are posted in that comment's thread: plan results, a request
// that fails, a reply to a command that runs nothing. Autoplan answers no
// comment, and a command from the dashboard or the API carries an id the
// host does not know: both post new comments. The repository is named as
// on Azure DevOps (org/project/repo), the statuses link its page.
func TestResultsReplyInTheAskingCommentsThread(t *testing.T) {
	ctx := context.Background()
	opt := demo.Options{VCS: atoll.VCSAzureDevOps}
	r, db, repo, p := startDemoRunner(t, opt, func(db atoll.RunnerStore) atoll.RunnerStore { return db })
	waitRequest(t, db, 1)
	autoplan := p.since(0)
	if len(autoplan) == 0 || autoplan[0].replyTo != "" || !strings.Contains(autoplan[0].body, "staging") {
		t.Fatalf("autoplan posted %+v; want a new comment with staging's plan", autoplan)
	}

	// comment queues body as if it came from the host (source "") or the
	// API (an address), waits for it and returns what it posted.
	comment := func(body, commentID, source string) []post {
		t.Helper()
		n := len(p.since(0))
		id, err := r.Enqueue(ctx, &vcs.Event{Kind: vcs.EventComment, DeliveryID: "d-" + commentID, Repo: *repo,
			Pull: atoll.Pull{Number: 1}, User: "bob", Comment: body, CommentID: commentID, Source: source})
		if err != nil || id == 0 {
			t.Fatalf("Enqueue(%q) = %d, %v", body, id, err)
		}
		waitRequest(t, db, id)
		posted := p.since(n)
		if len(posted) == 0 {
			t.Fatalf("%q posted nothing", body)
		}
		return posted
	}
	for _, c := range []struct {
		name, body, commentID, source string
		replyTo, says                 string
	}{
		{"plan results", "atlantis plan -p staging", "41/7", "", "41/7", "staging"},
		{"failed request", "atlantis plan -p nosuch", "42/1", "", "42/1", "nosuch"},
		{"a command that runs nothing", "atlantis help", "43/1", "", "43/1", "atlantis"},
		{"a bad command", "atlantis plan -d ../x", "44/1", "", "44/1", ".."},
		{"from the API", "atlantis help", "5", "192.0.2.7", "", "atlantis"},
	} {
		t.Run(c.name, func(t *testing.T) {
			for _, x := range comment(c.body, c.commentID, c.source) {
				if x.replyTo != c.replyTo || !strings.Contains(x.body, c.says) {
					t.Errorf("posted %+v; want a reply to %q saying %q", x, c.replyTo, c.says)
				}
			}
		})
	}

	p.mu.Lock()
	defer p.mu.Unlock()
	linked := false
	for _, st := range p.statuses {
		if st.TargetURL != "" && !strings.HasPrefix(st.TargetURL, "http://atoll.example/jobs/") {
			linked = true
			if want := "http://atoll.example/repos/demo-org%2Fdemo-project/infra/pulls/1"; st.TargetURL != want {
				t.Errorf("status %s links %s, want %s", st.Context, st.TargetURL, want)
			}
		}
	}
	if !linked {
		t.Errorf("no status links the pull request page: %+v", p.statuses)
	}
}

// startDemoRunner seeds the demo repository (as host opt.VCS names it),
// which queues its autoplan as request 1, and starts a runner on it with
// real git and Terraform, whose store is wrap(db) and whose host is a
// threaded local provider. It returns the runner, the store unwrapped, the
// demo repository and the host.
func startDemoRunner(t *testing.T, opt demo.Options, wrap func(atoll.RunnerStore) atoll.RunnerStore) (*runner.Runner, *store.DB, *atoll.Repo, *threaded) {
	t.Helper()
	tf := testTerraform(t)
	t.Setenv("CHECKPOINT_DISABLE", "1")
	ctx := context.Background()
	dir := t.TempDir()
	db := storetest.Open(t, storetest.Path(filepath.Join(dir, "atoll.db")))
	repo, err := demo.SeedWith(ctx, db, dir, "http://atoll.example", opt)
	if err != nil {
		t.Fatal(err)
	}
	p := &threaded{Provider: &local.Provider{DB: db}}
	r := &runner.Runner{
		DB:        wrap(db),
		Providers: map[string]vcs.Provider{atoll.VCSLocal: p},
		Workdirs:  &git.Workdirs{Root: filepath.Join(dir, "work")},
		Terraform: terraform.Runner{Bin: tf},
		Parser:    command.Parser{ExecutableName: "atlantis"},
		Markdown:  markdown.Renderer{Executable: "atlantis"},
		Logger:    slog.New(slog.NewTextHandler(io.Discard, nil)),
		// The demo repository sets apply_requirements.
		Config: runner.Config{ServerConfig: demo.ServerConfig(), Allowlist: runner.ParseAllowlist(opt.Allowlist()), PublicURL: "http://atoll.example"},
	}
	if err := r.Start(ctx); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(r.Stop)
	return r, db, repo, p
}
