package runner_test

import (
	"context"
	"fmt"
	"io"
	"log/slog"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/atollhq/atoll"
	"github.com/atollhq/atoll/git"
	"github.com/atollhq/atoll/runner"
	"github.com/atollhq/atoll/runner/command"
	"github.com/atollhq/atoll/runner/markdown"
	"github.com/atollhq/atoll/runner/terraform"
	"github.com/atollhq/atoll/store"
	"github.com/atollhq/atoll/vcs"
	"github.com/atollhq/atoll/vcs/local"
)

// okTF plans one terraform_data resource: no provider to download.
const okTF = `resource "terraform_data" "x" {
  input = "%s"
}
`

// brokenTF fails at plan: the file it reads does not exist.
const brokenTF = `resource "terraform_data" "x" {
  input = file("${path.module}/missing.txt")
}
`

// orderEnv is a local repository whose pull requests change every project
// dir, a store and a runner with real Terraform.
type orderEnv struct {
	t    *testing.T
	db   *store.DB
	repo *atoll.Repo
	p    *threaded
	r    *runner.Runner
}

// newOrderEnv writes atlantis.yaml and one main.tf per dir (broken ones
// fail to plan) on main, opens pulls pull requests each changing every
// dir, and seeds the store; the runner is not started.
func newOrderEnv(t *testing.T, yaml string, dirs, broken []string, pulls int) *orderEnv {
	t.Helper()
	tf := testTerraform(t)
	t.Setenv("CHECKPOINT_DISABLE", "1")
	ctx := context.Background()
	dir := t.TempDir()
	src := filepath.Join(dir, "src")
	env := []string{"GIT_AUTHOR_NAME=A", "GIT_AUTHOR_EMAIL=a@example.com", "GIT_COMMITTER_NAME=A", "GIT_COMMITTER_EMAIL=a@example.com"}
	run := func(args ...string) string {
		t.Helper()
		out, err := git.Run(ctx, src, env, args...)
		if err != nil {
			t.Fatal(err)
		}
		return out
	}
	write := func(name, body string) {
		t.Helper()
		p := filepath.Join(src, name)
		if err := os.MkdirAll(filepath.Dir(p), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(p, []byte(body), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	if err := os.MkdirAll(src, 0o755); err != nil {
		t.Fatal(err)
	}
	write("atlantis.yaml", yaml)
	for _, d := range dirs {
		write(d+"/main.tf", fmt.Sprintf(okTF, d))
	}
	run("init", "--quiet", "--initial-branch=main")
	run("add", "-A")
	run("commit", "--quiet", "-m", "base")
	base := run("rev-parse", "HEAD")
	db := store.NewDB(filepath.Join(dir, "atoll.db"))
	if err := db.Open(ctx); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { db.Close() })
	repo := atoll.Repo{VCS: atoll.VCSLocal, Host: "local", Owner: "acme", Name: "infra", CloneURL: "file://" + src}
	for n := 1; n <= pulls; n++ {
		branch := fmt.Sprintf("pr%d", n)
		run("checkout", "--quiet", "-b", branch, "main")
		for _, d := range dirs {
			body := fmt.Sprintf(okTF, fmt.Sprintf("%s-%d", d, n))
			for _, b := range broken {
				if b == d {
					body = brokenTF
				}
			}
			write(d+"/main.tf", body)
		}
		run("commit", "--quiet", "-am", branch)
		head := run("rev-parse", "HEAD")
		err := db.Update(ctx, func(tx *store.Tx) error {
			id, err := tx.UpsertRepo(repo)
			if err != nil {
				return err
			}
			repo.ID = id
			_, err = tx.UpsertPull(id, atoll.Pull{Number: n, Author: "alice", HeadSHA: head, HeadRef: branch, BaseSHA: base,
				BaseRef: "main", State: atoll.PullOpen, URL: fmt.Sprintf("http://atoll.example/pull/%d", n)})
			return err
		})
		if err != nil {
			t.Fatal(err)
		}
	}
	run("checkout", "--quiet", "main")
	p := &threaded{Provider: &local.Provider{DB: db}}
	r := &runner.Runner{
		DB:          db,
		Providers:   map[string]vcs.Provider{atoll.VCSLocal: p},
		Workdirs:    &git.Workdirs{Root: filepath.Join(dir, "work")},
		Terraform:   terraform.Runner{Bin: tf},
		Parser:      command.Parser{ExecutableName: "atlantis"},
		Markdown:    markdown.Renderer{Executable: "atlantis"},
		Allowlist:   runner.ParseAllowlist("local/acme/*"),
		PublicURL:   "http://atoll.example",
		Parallelism: 2,
		Logger:      slog.New(slog.NewTextHandler(io.Discard, nil)),
	}
	return &orderEnv{t: t, db: db, repo: &repo, p: p, r: r}
}

func (e *orderEnv) start() {
	e.t.Helper()
	if err := e.r.Start(context.Background()); err != nil {
		e.t.Fatal(err)
	}
	e.t.Cleanup(e.r.Stop)
}

// comment runs body on pull request number and returns the request's jobs
// by project name and what was posted.
func (e *orderEnv) comment(number int, body string) (map[string]*atoll.Job, string) {
	e.t.Helper()
	ctx := context.Background()
	n := len(e.p.since(0))
	id, err := e.r.Enqueue(ctx, &vcs.Event{Kind: vcs.EventComment, DeliveryID: fmt.Sprintf("d-%d-%d", number, n), Repo: *e.repo,
		Pull: atoll.Pull{Number: number}, User: "bob", Comment: body})
	if err != nil || id == 0 {
		e.t.Fatalf("Enqueue(%q) = %d, %v", body, id, err)
	}
	waitRequest(e.t, e.db, id)
	return e.requestJobs(id), e.posted(n)
}

func (e *orderEnv) requestJobs(id int64) map[string]*atoll.Job {
	e.t.Helper()
	jobs, err := e.db.RequestJobs(context.Background(), id)
	if err != nil {
		e.t.Fatal(err)
	}
	byName := map[string]*atoll.Job{}
	for _, j := range jobs {
		byName[j.Project] = j
	}
	return byName
}

func (e *orderEnv) posted(n int) string {
	var b strings.Builder
	for _, x := range e.p.since(n) {
		b.WriteString(x.body + "\n")
	}
	return b.String()
}

// locked returns the projects pull request number holds locks of.
func (e *orderEnv) locked(number int) map[string]bool {
	e.t.Helper()
	locks, err := e.db.Locks(context.Background())
	if err != nil {
		e.t.Fatal(err)
	}
	held := map[string]bool{}
	for _, l := range locks {
		if l.Pull == number {
			held[l.Project] = true
		}
	}
	return held
}

const orderYAML = `version: 3
parallel_plan: true
abort_on_execution_order_fail: %v
projects:
- {name: late, dir: late, execution_order_group: 2}
- {name: child, dir: child, execution_order_group: 1, depends_on: [broken]}
- {name: early, dir: early, execution_order_group: 1}
- {name: broken, dir: broken, execution_order_group: 1}
- {name: after, dir: after, execution_order_group: 2, depends_on: [early]}
`

var orderDirs = []string{"late", "child", "early", "broken", "after"}

// Projects plan group by group: no project of group 2 starts before every
// project of group 1 ended. A project whose dependency failed is not run,
// says why and keeps no lock. Without abort_on_execution_order_fail the
// next group still runs (as in Atlantis); with it, the next group is not
// run and says why.
func TestExecutionOrderGroups(t *testing.T) {
	for _, abort := range []bool{false, true} {
		t.Run(fmt.Sprintf("abort=%v", abort), func(t *testing.T) {
			e := newOrderEnv(t, fmt.Sprintf(orderYAML, abort), orderDirs, []string{"broken"}, 1)
			e.start()
			jobs, posted := e.comment(1, "atlantis plan")
			for _, name := range orderDirs {
				if jobs[name] == nil {
					t.Fatalf("no job for %s: %+v", name, jobs)
				}
			}
			want := map[string]string{"early": atoll.JobSucceeded, "broken": atoll.JobFailed, "child": atoll.JobCanceled,
				"late": atoll.JobSucceeded, "after": atoll.JobSucceeded}
			if abort {
				want["late"], want["after"] = atoll.JobCanceled, atoll.JobCanceled
			}
			for name, state := range want {
				if jobs[name].State != state {
					t.Errorf("%s is %s (%s), want %s", name, jobs[name].State, jobs[name].Error, state)
				}
			}
			if !strings.Contains(jobs["child"].Error, "depends on project `broken`") {
				t.Errorf("child's reason = %q", jobs["child"].Error)
			}
			if !strings.Contains(posted, "depends on project `broken`") {
				t.Errorf("the pull request was not told why child did not run:\n%s", posted)
			}
			if abort {
				for _, name := range []string{"late", "after"} {
					if !strings.Contains(jobs[name].Error, "abort_on_execution_order_fail") || jobs[name].StartedAt != nil {
						t.Errorf("%s: started %v, reason %q; want not run, for the abort", name, jobs[name].StartedAt, jobs[name].Error)
					}
				}
			} else {
				var lastOfFirst int64
				for _, name := range []string{"early", "broken"} {
					lastOfFirst = max(lastOfFirst, jobs[name].FinishedAt.UnixNano())
				}
				for _, name := range []string{"late", "after"} {
					if jobs[name].StartedAt == nil || jobs[name].StartedAt.UnixNano() < lastOfFirst {
						t.Errorf("%s started at %v, before group 1 ended (%d)", name, jobs[name].StartedAt, lastOfFirst)
					}
				}
			}
			// Locks stay only with plans: the failed plan gave its lock
			// up, the projects not run took none for good.
			held := e.locked(1)
			for name, state := range want {
				if held[name] != (state == atoll.JobSucceeded) {
					t.Errorf("%s (%s): lock held = %v", name, state, held[name])
				}
			}
		})
	}
}
