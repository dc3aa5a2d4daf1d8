package demo_test

import (
	"context"
	"encoding/json"
	"io"
	"log/slog"
	"net/http"
	"net/http/httptest"
	"net/url"
	"os"
	"path/filepath"
	"strconv"
	"strings"
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
	"github.com/atollhq/atoll/web"
)

func TestOptions(t *testing.T) {
	for _, c := range []struct {
		vcs, repo, approval, allowlist string
	}{
		{"", "demo/infra", demo.PlanApproval, "local/demo/*"},
		{atoll.VCSLocal, "demo/infra", demo.PlanApproval, "local/demo/*"},
		{atoll.VCSAzureDevOps, "demo-org/demo-project/infra", "demo-org/demo-project/infra/production", "dev.azure.com/demo-org/demo-project/*"},
	} {
		o := demo.Options{VCS: c.vcs}
		r := o.Repo()
		if err := o.Check(); err != nil || r.FullName() != c.repo || r.VCS != atoll.VCSLocal || o.PlanApproval() != c.approval || o.Allowlist() != c.allowlist {
			t.Errorf("Options{%q}: %v, %s (%s), %q, %q", c.vcs, err, r.FullName(), r.VCS, o.PlanApproval(), o.Allowlist())
		}
		if !runner.ParseAllowlist(o.Allowlist()).Allows(r.Host, r.Owner, r.Name) {
			t.Errorf("Options{%q}: its allowlist refuses its repository", c.vcs)
		}
	}
	if err := (demo.Options{VCS: "github"}).Check(); atoll.ErrorCode(err) != atoll.EINVALID {
		t.Errorf("Options{github}.Check() = %v", err)
	}
}

// The demo seeded with Azure DevOps naming: its pull request links its
// page (the owner one escaped segment), autoplans, takes comments through
// the API, needs the approval --plan-approval asks for (named with the
// three-part repository) and applies once approved, all in the browser's
// paths.
func TestAzureDemo(t *testing.T) {
	tf := os.Getenv("ATOLL_TEST_TERRAFORM")
	if tf == "" {
		tf, _ = filepath.Abs(filepath.Join("..", "bin", "terraform"))
	}
	if _, err := os.Stat(tf); err != nil {
		t.Skipf("terraform binary not available (%v); run make or set ATOLL_TEST_TERRAFORM", err)
	}
	t.Setenv("CHECKPOINT_DISABLE", "1")
	ctx := context.Background()
	dir := t.TempDir()
	db := storetest.Open(t, storetest.Path(filepath.Join(dir, "atoll.db")))
	opt := demo.Options{VCS: atoll.VCSAzureDevOps}
	repo, err := demo.SeedWith(ctx, db, dir, "http://atoll.example", opt)
	if err != nil {
		t.Fatal(err)
	}
	// Seeding again finds it.
	if again, err := demo.SeedWith(ctx, db, dir, "http://atoll.example", opt); err != nil || again.ID != repo.ID {
		t.Fatalf("second seed = %+v, %v", again, err)
	}
	pull, err := db.PullByNumber(ctx, "demo-org/demo-project/infra", 1)
	if err != nil {
		t.Fatal(err)
	}
	const pagePath = "/repos/demo-org%2Fdemo-project/infra/pulls/1"
	if pull.URL != "http://atoll.example"+pagePath {
		t.Fatalf("pull request URL %s", pull.URL)
	}
	policy, err := runner.ParseApprovalPolicy(opt.PlanApproval())
	if err != nil {
		t.Fatal(err)
	}
	r := &runner.Runner{
		DB:        db,
		Providers: map[string]vcs.Provider{atoll.VCSLocal: &local.Provider{DB: db}},
		Workdirs:  &git.Workdirs{Root: filepath.Join(dir, "work")},
		Terraform: terraform.Runner{Bin: tf},
		Parser:    command.Parser{ExecutableName: "atlantis"},
		Markdown:  markdown.Renderer{Executable: "atlantis"},
		Logger:    slog.New(slog.NewTextHandler(io.Discard, nil)),
		Config:    runner.Config{Allowlist: runner.ParseAllowlist(opt.Allowlist()), PlanApproval: policy, PublicURL: "http://atoll.example", ServerConfig: demo.ServerConfig()},
	}
	if err := r.Start(ctx); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(r.Stop)
	s := &web.Server{DB: db, Commands: r, Unlocks: r, Logs: r.Hub, Approvals: r.PlanApproval, Demo: true, PublicURL: "http://atoll.example", Logger: slog.New(slog.NewTextHandler(io.Discard, nil))}
	h := s.Handler()
	serve := func(method, target, contentType, body, user string) *httptest.ResponseRecorder {
		t.Helper()
		req := httptest.NewRequest(method, target, strings.NewReader(body))
		if contentType != "" {
			req.Header.Set("Content-Type", contentType)
		}
		req.Header.Set("Accept", "application/json")
		req = req.WithContext(atoll.NewContextWithUser(req.Context(), &atoll.User{Name: user, Role: atoll.RoleOperator}))
		rec := httptest.NewRecorder()
		h.ServeHTTP(rec, req)
		return rec
	}
	lastComment := func() string {
		t.Helper()
		cs, err := db.Comments(ctx, pull.ID)
		if err != nil || len(cs) == 0 {
			t.Fatalf("comments: %v, %v", cs, err)
		}
		return cs[len(cs)-1].Body
	}
	// comment posts body through the API as user and waits for its request.
	comment := func(user, body string) string {
		t.Helper()
		rec := serve("POST", "/api/v1"+pagePath+"/comments", "application/json", `{"body":"`+body+`"}`, user)
		if rec.Code != http.StatusCreated {
			t.Fatalf("POST %q: %d %s", body, rec.Code, rec.Body)
		}
		waitIdle(t, db)
		return lastComment()
	}

	waitIdle(t, db) // the seeded autoplan
	if got := lastComment(); !strings.Contains(got, "staging") || !strings.Contains(got, "Plan:") {
		t.Fatalf("autoplan comment: %s", got)
	}
	rec := serve("GET", pagePath, "", "", "bob")
	if rec.Code != http.StatusOK || !strings.Contains(rec.Body.String(), "demo-org/demo-project/infra#1") {
		t.Fatalf("GET %s: %d", pagePath, rec.Code)
	}

	if got := comment("alice", "atlantis plan -p production"); !strings.Contains(got, "production") {
		t.Fatalf("plan comment: %s", got)
	}
	if got := comment("alice", "atlantis apply -p production"); !strings.Contains(got, "needs an approval in Atoll") {
		t.Fatalf("unapproved apply comment: %s", got)
	}
	plans, err := db.PendingPlans(ctx, pull.ID)
	if err != nil {
		t.Fatal(err)
	}
	projects, err := db.PullProjects(ctx, pull.ID)
	if err != nil {
		t.Fatal(err)
	}
	var prod int64
	for _, p := range plans {
		for _, pr := range projects {
			if pr.ID == p.ProjectID && pr.Dir == "production" {
				prod = p.ID
			}
		}
	}
	if prod == 0 {
		t.Fatalf("no pending production plan in %+v", plans)
	}
	rec = serve("POST", "/plans/"+itoa(prod)+"/approve", "application/x-www-form-urlencoded", url.Values{"reason": {"LGTM"}}.Encode(), "bob")
	if rec.Code != http.StatusOK && rec.Code != http.StatusSeeOther {
		t.Fatalf("approve: %d %s", rec.Code, rec.Body)
	}
	if got := comment("alice", "atlantis apply -p production"); !strings.Contains(got, "Apply complete!") || !strings.Contains(got, "Approved by bob") {
		t.Fatalf("approved apply comment: %s", got)
	}
	var api struct {
		Repo string `json:"repo"`
	}
	rec = serve("GET", "/api/v1"+pagePath, "", "", "bob")
	if err := json.Unmarshal(rec.Body.Bytes(), &api); err != nil || api.Repo != "demo-org/demo-project/infra" {
		t.Fatalf("API pull: %s (%v)", rec.Body, err)
	}
}

// waitIdle waits until no request is queued or running.
func waitIdle(t *testing.T, db *store.DB) {
	t.Helper()
	deadline := time.Now().Add(3 * time.Minute)
	for {
		q, err1 := db.CountRequests(context.Background(), atoll.RequestQueued)
		r, err2 := db.CountRequests(context.Background(), atoll.RequestRunning)
		if err1 != nil || err2 != nil {
			t.Fatal(err1, err2)
		}
		if q+r == 0 {
			return
		}
		if time.Now().After(deadline) {
			t.Fatalf("%d requests queued, %d running", q, r)
		}
		time.Sleep(20 * time.Millisecond)
	}
}

func itoa(n int64) string { return strconv.FormatInt(n, 10) }
