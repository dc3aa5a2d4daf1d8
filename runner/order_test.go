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
	"github.com/atollhq/atoll/command"
	"github.com/atollhq/atoll/git"
	"github.com/atollhq/atoll/repocfg"
	"github.com/atollhq/atoll/runner"
	"github.com/atollhq/atoll/runner/markdown"
	"github.com/atollhq/atoll/store"
	"github.com/atollhq/atoll/store/storetest"
	"github.com/atollhq/atoll/terraform"
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
	db := storetest.Open(t, storetest.Path(filepath.Join(dir, "atoll.db")))
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
		DB:        db,
		Providers: map[string]vcs.Provider{atoll.VCSLocal: p},
		Workdirs:  &git.Workdirs{Root: filepath.Join(dir, "work")},
		Terraform: terraform.Runner{Bin: tf},
		Parser:    command.Parser{ExecutableName: "atlantis"},
		Markdown:  markdown.Renderer{Executable: "atlantis"},
		Logger:    slog.New(slog.NewTextHandler(io.Discard, nil)),
		Config:    runner.Config{Allowlist: runner.ParseAllowlist("local/acme/*"), PublicURL: "http://atoll.example", Parallelism: 2},
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

// A plan takes the locks of all its projects or none (Atlantis issue
// #6377): with one project locked by another pull request, no project is
// planned or locked, and every one is told who holds the lock.
func TestPlanTakesAllLocksOrNone(t *testing.T) {
	yaml := "version: 3\nparallel_plan: true\nprojects:\n- {name: a, dir: a}\n- {name: b, dir: b}\n- {name: c, dir: c}\n"
	e := newOrderEnv(t, yaml, []string{"a", "b", "c"}, nil, 2)
	e.start()
	if jobs, _ := e.comment(2, "atlantis plan -p b"); jobs["b"].State != atoll.JobSucceeded {
		t.Fatalf("pull #2 plan of b: %+v", jobs["b"])
	}
	jobs, posted := e.comment(1, "atlantis plan")
	for _, name := range []string{"a", "b", "c"} {
		j := jobs[name]
		if j == nil || j.State != atoll.JobFailed || !strings.Contains(j.Error, "#2") {
			t.Errorf("%s: %+v; want failed, naming pull request #2", name, j)
		}
	}
	if held := e.locked(1); len(held) != 0 {
		t.Errorf("pull #1 holds %v; want no lock (all or none)", held)
	}
	if plans, err := e.db.PendingPlans(context.Background(), jobs["a"].PullID); err != nil || len(plans) != 0 {
		t.Errorf("pull #1 plans = %v, %v; want none", plans, err)
	}
	if !strings.Contains(posted, "#2") {
		t.Errorf("the pull request was not told who holds the lock:\n%s", posted)
	}
	// Once #2 lets go, #1 plans all three.
	if _, posted := e.comment(2, "atlantis unlock"); posted == "" {
		t.Fatal("unlock posted nothing")
	}
	jobs, _ = e.comment(1, "atlantis plan")
	for _, name := range []string{"a", "b", "c"} {
		if j := jobs[name]; j == nil || j.State != atoll.JobSucceeded {
			t.Errorf("%s: %+v; want planned", name, j)
		}
	}
	if held := e.locked(1); len(held) != 3 {
		t.Errorf("pull #1 holds %v; want all three", held)
	}
}

// A request resumed after a restart keeps the order stored with its jobs:
// a failure recorded before the stop still holds back the project that
// depends on it and, with abort_on_execution_order_fail, the later group.
func TestResumedRequestKeepsTheOrder(t *testing.T) {
	yaml := "version: 3\nabort_on_execution_order_fail: true\nprojects:\n- {name: a, dir: a}\n- {name: b, dir: b, depends_on: [a]}\n- {name: c, dir: c, execution_order_group: 1}\n"
	e := newOrderEnv(t, yaml, []string{"a", "b", "c"}, nil, 1)
	// As left by a server that stopped after a's plan failed.
	specs := map[string]atoll.JobSpec{"a": {AbortOnOrderFail: true}, "b": {DependsOn: []string{"a"}, AbortOnOrderFail: true}, "c": {Group: 1, AbortOnOrderFail: true}}
	req := e.leftRequest([]string{"a", "b", "c"}, specs, func(tx *store.Tx, j *atoll.Job) error {
		if j.Project != "a" {
			return nil
		}
		return tx.FinishJob(j.ID, atoll.JobFailed, "boom", nil)
	})
	e.start()
	waitRequest(t, e.db, req.ID)
	jobs := e.requestJobs(req.ID)
	if j := jobs["b"]; j.State != atoll.JobCanceled || !strings.Contains(j.Error, "depends on project `a`") {
		t.Errorf("b: %s %q; want not run, for its failed dependency", j.State, j.Error)
	}
	if j := jobs["c"]; j.State != atoll.JobCanceled || !strings.Contains(j.Error, "abort_on_execution_order_fail") {
		t.Errorf("c: %s %q; want not run, for the abort", j.State, j.Error)
	}
	if held := e.locked(1); len(held) != 0 {
		t.Errorf("pull #1 holds %v; want no lock: nothing was planned", held)
	}
}

// As in Atlantis, a project is not applied before the projects it depends
// on: alone, it is refused while its dependency's plan is unapplied; in
// one apply with it, it waits for the dependency's apply to succeed.
func TestApplyWaitsForDependencies(t *testing.T) {
	yaml := "version: 3\nparallel_apply: true\nprojects:\n- {name: b, dir: b, depends_on: [a]}\n- {name: a, dir: a}\n"
	e := newOrderEnv(t, yaml, []string{"a", "b"}, nil, 1)
	e.start()
	jobs, _ := e.comment(1, "atlantis plan")
	if jobs["a"].State != atoll.JobSucceeded || jobs["b"].State != atoll.JobSucceeded {
		t.Fatalf("plans: a %s, b %s", jobs["a"].State, jobs["b"].State)
	}
	jobs, posted := e.comment(1, "atlantis apply -p b")
	if j := jobs["b"]; j == nil || j.State != atoll.JobFailed || !strings.Contains(j.Error, "apply its dependencies: [a]") {
		t.Fatalf("apply -p b: %+v; want refused for a", j)
	}
	if !strings.Contains(posted, "apply its dependencies") {
		t.Errorf("the pull request was not told why:\n%s", posted)
	}
	jobs, _ = e.comment(1, "atlantis apply")
	a, b := jobs["a"], jobs["b"]
	if a == nil || b == nil || a.State != atoll.JobSucceeded || b.State != atoll.JobSucceeded {
		t.Fatalf("apply: a %+v, b %+v; want both applied", a, b)
	}
	if b.StartedAt.Before(*a.FinishedAt) {
		t.Errorf("b started at %v, before a's apply ended at %v", b.StartedAt, a.FinishedAt)
	}
}

// A dependency whose plan stage writes no plan file holds its dependents
// back like one with changes, whatever its steps printed: what it changes
// is unknown until its apply stage has run.
func TestApplyWaitsForFilelessDependency(t *testing.T) {
	yaml := `version: 3
projects:
- {name: b, dir: b, depends_on: [a]}
- {name: a, dir: a, workflow: scripted}
workflows:
  scripted:
    plan:
      steps: [{run: 'echo "No changes. Your infrastructure matches the configuration."'}]
    apply:
      steps: [{run: echo applied by script}]
`
	e := newOrderEnv(t, yaml, []string{"a", "b"}, nil, 1)
	sc, err := repocfg.ParseServerConfig("repos.yaml", []byte("repos:\n- id: /.*/\n  allowed_overrides: [workflow]\n  allow_custom_workflows: true\n"))
	if err != nil {
		t.Fatal(err)
	}
	e.r.ServerConfig = sc
	e.start()
	jobs, _ := e.comment(1, "atlantis plan")
	if jobs["a"].State != atoll.JobSucceeded || jobs["b"].State != atoll.JobSucceeded {
		t.Fatalf("plans: a %+v, b %+v", jobs["a"], jobs["b"])
	}
	jobs, _ = e.comment(1, "atlantis apply -p b")
	if j := jobs["b"]; j == nil || j.State != atoll.JobFailed || !strings.Contains(j.Error, "apply its dependencies: [a]") {
		t.Fatalf("apply -p b: %+v; want refused until a's run steps applied", j)
	}
	jobs, posted := e.comment(1, "atlantis apply")
	if a, b := jobs["a"], jobs["b"]; a == nil || b == nil || a.State != atoll.JobSucceeded || b.State != atoll.JobSucceeded {
		t.Fatalf("apply: a %+v, b %+v; want both applied", a, b)
	}
	if !strings.Contains(posted, "applied by script") {
		t.Errorf("a's apply stage did not run:\n%s", posted)
	}
}

// leftRequest stores an "atlantis plan" request of pull request 1 as a
// server that stopped in the middle of it leaves it: one queued plan job
// per project name, in order, with specs[name]; ended may end some of them
// in the same transaction.
func (e *orderEnv) leftRequest(names []string, specs map[string]atoll.JobSpec, ended func(tx *store.Tx, j *atoll.Job) error) *atoll.Request {
	e.t.Helper()
	ctx := context.Background()
	pull, err := e.db.PullByNumber(ctx, e.repo.FullName(), 1)
	if err != nil {
		e.t.Fatal(err)
	}
	req := &atoll.Request{PullID: pull.ID, Kind: atoll.RequestComment, Comment: "atlantis plan", User: "bob", HeadSHA: pull.HeadSHA}
	err = e.db.Update(ctx, func(tx *store.Tx) error {
		if err := tx.InsertRequest(req); err != nil {
			return err
		}
		for _, name := range names {
			id, err := tx.UpsertProject(e.repo.ID, atoll.Project{Name: name, Dir: name, Workspace: atoll.DefaultWorkspace})
			if err != nil {
				return err
			}
			j := &atoll.Job{Kind: atoll.JobPlan, RequestID: req.ID, PullID: pull.ID, ProjectID: id, HeadSHA: pull.HeadSHA, User: "bob",
				Repo: e.repo.FullName(), Pull: 1, Project: name, Dir: name, Workspace: atoll.DefaultWorkspace, Spec: specs[name]}
			if err := tx.InsertJob(j); err != nil {
				return err
			}
			if err := ended(tx, j); err != nil {
				return err
			}
		}
		return nil
	})
	if err != nil {
		e.t.Fatal(err)
	}
	return req
}
