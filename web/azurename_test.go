package web_test

import (
	"context"
	"encoding/json"
	"io"
	"log/slog"
	"net/http"
	"net/url"
	"regexp"
	"strings"
	"testing"

	"github.com/atollhq/atoll"
	"github.com/atollhq/atoll/inmem"
	"github.com/atollhq/atoll/runner"
	"github.com/atollhq/atoll/store"
	"github.com/atollhq/atoll/store/storetest"
	"github.com/atollhq/atoll/templates"
	"github.com/atollhq/atoll/web"
)

// azureFixture serves an Azure DevOps-shaped repository (org/project/infra,
// its owner "org/project") with pull request #3, a project, a plan job and
// a lock, beside a decoy org/infra #3 that a wrong split of the name would
// reach; the runner is not started, so requests stay queued.
type azureFixture struct {
	*pullFixture
	decoyPullID int64
}

const azureRepo = "org/project/infra"

func newAzureFixture(t *testing.T) *azureFixture {
	t.Helper()
	ctx := context.Background()
	db := storetest.Open(t)
	db.Changes = inmem.NewChanges()
	f := &azureFixture{pullFixture: &pullFixture{db: db, projects: map[string]int64{}, jobs: map[string]int64{}, locks: map[string]int64{}}}
	err := db.Update(ctx, func(tx *store.Tx) error {
		repoID, err := tx.UpsertRepo(atoll.Repo{VCS: atoll.VCSLocal, Host: "dev.azure.com", Owner: "org/project", Name: "infra"})
		if err != nil {
			return err
		}
		if f.pullID, err = tx.UpsertPull(repoID, atoll.Pull{Number: 3, Title: "Azure buckets", Author: "carol", HeadSHA: newHead, State: atoll.PullOpen}); err != nil {
			return err
		}
		if f.projects["."], err = tx.UpsertProject(repoID, atoll.Project{Name: "net", Dir: ".", Workspace: "default"}); err != nil {
			return err
		}
		j := &atoll.Job{Kind: atoll.JobPlan, PullID: f.pullID, ProjectID: f.projects["."], HeadSHA: newHead, User: "carol"}
		if err := tx.InsertJob(j); err != nil {
			return err
		}
		f.jobs["."] = j.ID
		l, err := tx.TakeLock(f.projects["."], f.pullID, "carol")
		if err != nil || l != nil {
			return err
		}
		decoy, err := tx.UpsertRepo(atoll.Repo{VCS: atoll.VCSLocal, Host: "local", Owner: "org", Name: "infra"})
		if err != nil {
			return err
		}
		if f.decoyPullID, err = tx.UpsertPull(decoy, atoll.Pull{Number: 3, Title: "Decoy", Author: "dave", HeadSHA: oldHead, State: atoll.PullOpen}); err != nil {
			return err
		}
		_, err = tx.UpsertProject(decoy, atoll.Project{Name: "decoy", Dir: "decoy", Workspace: "default"})
		return err
	})
	if err != nil {
		t.Fatal(err)
	}
	s := &web.Server{DB: db, Changes: db.Changes, Logger: slog.New(slog.NewTextHandler(io.Discard, nil))}
	withRunner(s, &runner.Runner{
		DB:     db,
		Hub:    runner.NewHub(),
		Config: runner.Config{Allowlist: runner.ParseAllowlist("*")},
	})
	f.h = s.Handler()
	return f
}

// The owner "org/project" is one path segment, escaped: the real mux hands
// it back unescaped, and every page of the pull request is reached.
func TestAzurePullPageAndLinks(t *testing.T) {
	f := newAzureFixture(t)
	page := templates.PullPath(azureRepo, 3)
	if page != "/repos/org%2Fproject/infra/pulls/3" {
		t.Fatalf("PullPath = %s", page)
	}
	rec := f.do(t, "GET", page, "", "", vera)
	if rec.Code != http.StatusOK {
		t.Fatalf("GET %s: %d %s", page, rec.Code, rec.Body)
	}
	body := rec.Body.String()
	for _, want := range []string{"Azure buckets", azureRepo + "#3", `action="` + page + `/commands"`, `action="` + page + `/comment"`} {
		if !strings.Contains(body, want) {
			t.Errorf("pull page lacks %q", want)
		}
	}
	if strings.Contains(body, "Decoy") {
		t.Error("pull page shows the decoy pull request")
	}
	// Every link to the pull request's page works through the mux.
	links := regexp.MustCompile(`(?:href|action|hx-get|hx-post)="(/repos/[^"]*)"`).FindAllStringSubmatch(body, -1)
	if len(links) == 0 {
		t.Fatal("pull page links none of its own paths")
	}
	for _, m := range links {
		link := strings.ReplaceAll(m[1], "&amp;", "&")
		u, err := url.Parse(link)
		if err != nil || !strings.HasPrefix(u.EscapedPath(), "/repos/org%2Fproject/infra/pulls/3") {
			t.Errorf("link %s does not keep org/project one segment", link)
			continue
		}
		if strings.HasSuffix(u.Path, "/commands") || strings.HasSuffix(u.Path, "/comment") {
			continue // posted below
		}
		if rec := f.do(t, "GET", link, "", "", vera); rec.Code != http.StatusOK {
			t.Errorf("GET %s: %d", link, rec.Code)
		}
	}
	// The unescaped path is not the pull request's page.
	if rec := f.do(t, "GET", "/repos/org/project/infra/pulls/3", "", "", vera); rec.Code != http.StatusNotFound {
		t.Errorf("GET unescaped path: %d, want 404", rec.Code)
	}
}

// The Plan button, the comment box and the JSON API queue their request on
// the Azure pull request, not the decoy; the API reads it back.
func TestAzurePullCommandsAndAPI(t *testing.T) {
	f := newAzureFixture(t)
	page := templates.PullPath(azureRepo, 3)
	posts := []struct{ path, ct, body, want string }{
		{page + "/commands", formType, "command=plan", "atlantis plan"},
		{page + "/comment", formType, "body=" + url.QueryEscape("atlantis plan -p net"), "atlantis plan -p net"},
		{"/api/v1" + page + "/comments", jsonType, `{"body":"atlantis unlock"}`, "atlantis unlock"},
	}
	for _, p := range posts {
		rec := f.do(t, "POST", p.path, p.ct, p.body, alice, "Accept", "application/json")
		if rec.Code != http.StatusOK && rec.Code != http.StatusCreated {
			t.Fatalf("POST %s: %d %s", p.path, rec.Code, rec.Body)
		}
	}
	queued := f.queued(t)
	if len(queued) != len(posts) {
		t.Fatalf("queued %d requests, want %d", len(queued), len(posts))
	}
	for i, q := range queued {
		if q.PullID != f.pullID || q.Repo != azureRepo || q.Pull != 3 || q.Comment != posts[i].want {
			t.Errorf("request %d = %+v; want %q on %s#3", q.ID, q, posts[i].want, azureRepo)
		}
		// From the dashboard and the API: the client's address, never
		// "pr-comment" (whose comment ids the host would answer).
		if q.Source != "192.0.2.1" {
			t.Errorf("request %d source %q, want the client's address", q.ID, q.Source)
		}
	}
	// On a repository of a real host no comment is added in Atoll: the
	// request has no comment id (not "0").
	err := f.db.Update(context.Background(), func(tx *store.Tx) error {
		repoID, err := tx.UpsertRepo(atoll.Repo{VCS: atoll.VCSAzureDevOps, Host: "dev.azure.com", Owner: "org/project", Name: "web"})
		if err == nil {
			_, err = tx.UpsertPull(repoID, atoll.Pull{Number: 4, Author: "carol", HeadSHA: newHead, State: atoll.PullOpen})
		}
		return err
	})
	if err != nil {
		t.Fatal(err)
	}
	if rec := f.do(t, "POST", "/api/v1"+templates.PullPath("org/project/web", 4)+"/comments", jsonType, `{"body":"atlantis plan"}`, alice); rec.Code != http.StatusCreated {
		t.Fatalf("POST comment on org/project/web: %d %s", rec.Code, rec.Body)
	}
	if all := f.queued(t); len(all) != len(posts)+1 || all[len(posts)].Repo != "org/project/web" || all[len(posts)].CommentID != "" {
		t.Fatalf("requests = %+v; want org/project/web's, without a comment id", all[len(posts):])
	}

	rec := f.do(t, "GET", "/api/v1"+page, "", "", vera)
	if rec.Code != http.StatusOK {
		t.Fatalf("GET API pull: %d %s", rec.Code, rec.Body)
	}
	var pull struct {
		ID    int64         `json:"id"`
		Repo  string        `json:"repo"`
		Locks []*atoll.Lock `json:"locks"`
	}
	if err := json.Unmarshal(rec.Body.Bytes(), &pull); err != nil || pull.ID != f.pullID || pull.Repo != azureRepo || len(pull.Locks) != 1 {
		t.Fatalf("API pull = %+v, %v", pull, err)
	}
	rec = f.do(t, "GET", "/api/v1/pulls?repo="+url.QueryEscape(azureRepo), "", "", vera)
	var pulls []struct {
		ID int64 `json:"id"`
	}
	if err := json.Unmarshal(rec.Body.Bytes(), &pulls); err != nil || len(pulls) != 1 || pulls[0].ID != f.pullID {
		t.Fatalf("API pulls?repo = %s (%v)", rec.Body, err)
	}
}

// The locks and runs pages and the jobs API filter by the three-part name.
func TestAzureRepoFilters(t *testing.T) {
	f := newAzureFixture(t)
	page := templates.PullPath(azureRepo, 3)
	for _, path := range []string{"/locks?repo=", "/runs?repo="} {
		rec := f.do(t, "GET", path+url.QueryEscape(azureRepo), "", "", vera)
		body := rec.Body.String()
		if rec.Code != http.StatusOK || !strings.Contains(body, `href="`+page+`"`) {
			t.Errorf("GET %s%s: %d, links the pull request: %v", path, azureRepo, rec.Code, strings.Contains(body, page))
		}
		rec = f.do(t, "GET", path+"org/infra", "", "", vera)
		if rec.Code != http.StatusOK || strings.Contains(rec.Body.String(), `href="`+page+`"`) {
			t.Errorf("GET %sorg/infra: %d, shows the Azure pull request", path, rec.Code)
		}
	}
	rec := f.do(t, "GET", "/api/v1/jobs?repo="+url.QueryEscape(azureRepo), "", "", vera)
	var jobs []struct {
		ID int64 `json:"id"`
	}
	if err := json.Unmarshal(rec.Body.Bytes(), &jobs); err != nil || len(jobs) != 1 || jobs[0].ID != f.jobs["."] {
		t.Fatalf("API jobs?repo = %s (%v)", rec.Body, err)
	}
}
