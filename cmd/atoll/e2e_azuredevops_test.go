package main_test

import (
	"bytes"
	"encoding/base64"
	"encoding/json"
	"fmt"
	"net/http"
	"net/url"
	"os"
	"strings"
	"testing"
	"time"

	"github.com/atollhq/atoll"
	main "github.com/atollhq/atoll/cmd/atoll"
	"github.com/atollhq/atoll/vcs/azuredevops/azuretest"
)

// The Azure DevOps organization, project and repository of these tests.
const (
	adoOrg, adoProject, adoRepo = "acme", "infra-project", "infra"
	adoPAT                      = "ado-pat-for-tests"
	adoBot                      = "atoll-bot@acme.example"
	adoHookUser, adoHookPass    = "azure-hooks", "azure-hook-password"
)

// adoE2E is a real server serving a fake Azure DevOps (API and git).
type adoE2E struct {
	t       *testing.T
	az      *azuretest.Server
	repo    *gitRepo
	base    string
	dataDir string
	m       *main.Main
	// prepare adjusts the server before it starts.
	prepare func(*main.Main)
}

func newADOE2E(t *testing.T, files map[string]string, prepare func(*main.Main)) *adoE2E {
	testEnv(t)
	return newADOE2EOn(t, azuretest.NewServer(t), files, prepare)
}

// newADOE2EOn is newADOE2E on a fake the test has set up.
func newADOE2EOn(t *testing.T, az *azuretest.Server, files map[string]string, prepare func(*main.Main)) *adoE2E {
	e := &adoE2E{t: t, az: az, dataDir: t.TempDir(), prepare: prepare}
	e.az.AcceptPAT(adoPAT, adoBot)
	e.az.AcceptPAT("alice-pat", "alice@acme.example")
	e.az.AddRepo(adoOrg, adoProject, adoRepo)
	e.repo = newGitRepo(t, files)
	e.base = e.repo.git("rev-parse", "main")
	e.az.ServeGit(adoOrg, adoProject, adoRepo, e.repo.Dir)
	e.start()
	return e
}

// host is the Repo.Host of the fake: its host and port.
func (e *adoE2E) host() string {
	u, _ := url.Parse(e.az.URL)
	return u.Host
}

func (e *adoE2E) start() {
	e.m = startMainWith(e.t, e.dataDir, func(m *main.Main) {
		c := &m.Config
		c.AzureHostname, c.AzureToken, c.AzureUser = e.az.URL, adoPAT, adoBot
		c.AzureWebhookUser, c.AzureWebhookPassword = adoHookUser, adoHookPass
		c.RepoAllowlist = e.host() + "/" + adoOrg + "/" + adoProject + "/*"
		if e.prepare != nil {
			e.prepare(m)
		}
	})
	e.t.Cleanup(func() { e.m.Close() })
}

// open opens pull request number from a new branch changing files.
func (e *adoE2E) open(number int, branch string, files map[string]string) string {
	e.t.Helper()
	sha := e.repo.branch(branch, files)
	var changes []azuretest.Change
	for p := range files {
		changes = append(changes, azuretest.Change{Path: "/" + p, ChangeType: "edit"})
	}
	e.az.AddPull(adoOrg, adoProject, adoRepo, azuretest.Pull{Number: number, Title: "change " + branch, Author: "alice@acme.example",
		SourceRef: branch, TargetRef: "main", HeadSHA: sha, BaseSHA: e.base, Changes: changes})
	if code := e.hook("pullrequest.created.json", e.pullEdit(number), adoHookUser, adoHookPass); code != http.StatusOK {
		e.t.Fatalf("created webhook: status %d", code)
	}
	return sha
}

// pullEdit points a pull request event's resource at pull number as the
// fake holds it.
func (e *adoE2E) pullEdit(number int) func(map[string]any) {
	return func(p map[string]any) { e.setPull(p["resource"].(map[string]any), number) }
}

func (e *adoE2E) setPull(pr map[string]any, number int) {
	got := e.az.Pull(adoOrg, adoProject, adoRepo, number)
	repoURL := e.az.URL + "/" + adoOrg + "/" + adoProject + "/_apis/git/repositories/" + adoRepo
	repo := pr["repository"].(map[string]any)
	repo["name"], repo["url"], repo["remoteUrl"] = adoRepo, repoURL, e.az.URL+"/"+adoOrg+"/"+adoProject+"/_git/"+adoRepo
	repo["project"].(map[string]any)["name"] = adoProject
	pr["pullRequestId"], pr["status"], pr["title"] = number, "active", got.Title
	pr["url"] = fmt.Sprintf("%s/pullRequests/%d", repoURL, number)
	pr["sourceRefName"], pr["targetRefName"] = "refs/heads/"+got.SourceRef, "refs/heads/"+got.TargetRef
	pr["lastMergeSourceCommit"].(map[string]any)["commitId"] = got.HeadSHA
	pr["lastMergeTargetCommit"].(map[string]any)["commitId"] = got.BaseSHA
	pr["createdBy"].(map[string]any)["uniqueName"] = got.Author
}

// comment posts body as a new thread by alice, and its comment webhook;
// it returns the thread's id.
func (e *adoE2E) comment(number int, body string) int {
	e.t.Helper()
	thread := e.az.AddThread(adoOrg, adoProject, adoRepo, number, azuretest.Thread{
		Comments: []azuretest.Comment{{Author: "alice@acme.example", Content: body}}})
	code := e.hook("pullrequest-comment.v2.json", func(p map[string]any) {
		res := p["resource"].(map[string]any)
		c := res["comment"].(map[string]any)
		c["id"], c["parentCommentId"], c["content"] = 1, 0, body
		c["lastContentUpdatedDate"] = c["publishedDate"]
		c["author"].(map[string]any)["uniqueName"] = "alice@acme.example"
		self := fmt.Sprintf("%s/%s/_apis/git/repositories/%s/pullRequests/%d/threads/%d/comments/1", e.az.URL, adoOrg, adoRepo, number, thread)
		c["_links"] = map[string]any{"self": map[string]any{"href": self}}
		e.setPull(res["pullRequest"].(map[string]any), number)
	}, adoHookUser, adoHookPass)
	if code != http.StatusOK {
		e.t.Fatalf("comment webhook: status %d", code)
	}
	return thread
}

// hook posts an Azure DevOps service hook built from a real sample with
// edits, authenticated with basic auth, and returns the status code.
func (e *adoE2E) hook(fixtureName string, edit func(map[string]any), user, pass string) int {
	e.t.Helper()
	raw, err := os.ReadFile("../../vcs/azuredevops/testdata/azuredevops/" + fixtureName)
	if err != nil {
		e.t.Fatal(err)
	}
	var payload map[string]any
	if err := json.Unmarshal(raw, &payload); err != nil {
		e.t.Fatal(err)
	}
	edit(payload)
	// Each event has its own id (a retried delivery repeats it).
	payload["id"] = fmt.Sprintf("00000000-0000-0000-0000-%012d", deliveries.Add(1))
	body, _ := json.Marshal(payload)
	req, _ := http.NewRequest("POST", e.m.URL+"/events", bytes.NewReader(body))
	req.Header.Set("Content-Type", "application/json")
	req.Header.Set("X-Vss-ActivityId", fmt.Sprintf("activity-%d", time.Now().UnixNano()))
	if user != "" || pass != "" {
		req.Header.Set("Authorization", "Basic "+base64.StdEncoding.EncodeToString([]byte(user+":"+pass)))
	}
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		e.t.Fatal(err)
	}
	resp.Body.Close()
	return resp.StatusCode
}

// botComments are the comments Atoll posted on pull number, by thread.
func (e *adoE2E) botComments(number int) (all []string, byThread map[int][]azuretest.Comment) {
	byThread = map[int][]azuretest.Comment{}
	for _, th := range e.az.Threads(adoOrg, adoProject, adoRepo, number) {
		for _, c := range th.Comments {
			if c.Author == adoBot {
				all = append(all, c.Content)
				byThread[th.ID] = append(byThread[th.ID], c)
			}
		}
	}
	return all, byThread
}

// waitComment waits for Atoll's n-th comment (1-based) on pull number.
func (e *adoE2E) waitComment(number, n int) string {
	e.t.Helper()
	eventually(e.t, 90*time.Second, fmt.Sprintf("Atoll's comment %d on #%d", n, number), func() bool {
		all, _ := e.botComments(number)
		return len(all) >= n
	})
	all, _ := e.botComments(number)
	return all[n-1]
}

// status is the state of the newest pull request status of the context
// name, which Atoll posts as Atlantis does: split at its last "/" under
// the genre "Atlantis Bot" (atlantis/plan: genre Atlantis Bot/atlantis,
// name plan).
func (e *adoE2E) status(number int, name string) string {
	state := ""
	genre, short := azuretest.SplitStatusToCheck("Atlantis Bot/" + name)
	for _, s := range e.az.PullStatuses(adoOrg, adoProject, adoRepo, number) {
		if s.Genre == genre && s.Name == short {
			state = s.State
		}
	}
	return state
}

func (e *adoE2E) thread(number, id int) azuretest.Thread {
	for _, th := range e.az.Threads(adoOrg, adoProject, adoRepo, number) {
		if th.ID == id {
			return th
		}
	}
	e.t.Fatalf("no thread %d on #%d", id, number)
	return azuretest.Thread{}
}

// The GitHub acceptance path, on Azure DevOps: a created pull request
// autoplans in a thread of its own with PR statuses; a command in a thread
// is answered in that thread and closes the earlier plan's thread; apply;
// completing the pull request releases its locks; a webhook with wrong
// basic auth is refused and changes nothing.
func TestAzureDevOpsPullRequestWorkflow(t *testing.T) {
	e := newADOE2E(t, map[string]string{
		"staging/main.tf":    tfProject("staging", 1),
		"production/main.tf": tfProject("production", 1),
	}, func(m *main.Main) { m.Config.HidePrevPlanComments = true })
	full := adoOrg + "/" + adoProject + "/" + adoRepo

	e.open(1, "scale-staging", map[string]string{"staging/main.tf": tfProject("staging", 2)})
	plan := e.waitComment(1, 1)
	mustContain(t, "autoplan comment", plan, "staging", "Plan: 2 to add, 0 to change, 0 to destroy", "atlantis apply -d staging")
	eventually(t, 10*time.Second, "plan statuses", func() bool {
		return e.status(1, "atlantis/plan: staging/default") == "succeeded" && e.status(1, "atlantis/plan") == "succeeded"
	})
	for _, s := range e.az.PullStatuses(adoOrg, adoProject, adoRepo, 1) {
		if s.Name == "atlantis/plan: staging/default" && !strings.Contains(s.TargetURL, e.m.URL+"/jobs/") {
			t.Fatalf("project status target %q; want the job page", s.TargetURL)
		}
	}
	_, threads := e.botComments(1)
	if len(threads) != 1 {
		t.Fatalf("autoplan posted in %d threads; want one", len(threads))
	}
	var autoplanThread int
	for id := range threads {
		autoplanThread = id
	}
	var locks []atoll.Lock
	getJSON(t, e.m.URL+"/api/v1/locks", &locks)
	if len(locks) != 1 || locks[0].Repo != full || locks[0].Dir != "staging" || locks[0].Pull != 1 {
		t.Fatalf("locks after autoplan = %+v", locks)
	}

	// A command in a thread: the answer is a reply in that thread, and the
	// earlier plan's thread is closed (Azure's way of hiding it).
	asked := e.comment(1, "atlantis plan -d production")
	reply := e.waitComment(1, 2)
	mustContain(t, "plan -d reply", reply, "production", "Plan: 1 to add", "atlantis apply -d production")
	th := e.thread(1, asked)
	if len(th.Comments) != 2 || th.Comments[1].Author != adoBot || th.Comments[1].ParentID != 1 {
		t.Fatalf("the asking thread = %+v; want alice's comment and Atoll's reply to it", th)
	}
	eventually(t, 10*time.Second, "the autoplan thread closed", func() bool { return e.thread(1, autoplanThread).Status == "closed" })
	if e.thread(1, asked).Status == "closed" {
		t.Fatal("the thread holding the newest plan was closed")
	}

	// Bad input gets a clear answer in its thread and runs nothing.
	bad := e.comment(1, "atlantis plan -d ../etc")
	mustContain(t, "bad -d reply", e.waitComment(1, 3), "..", "Usage")
	if th := e.thread(1, bad); len(th.Comments) != 2 {
		t.Fatalf("the bad command's thread = %+v; want the refusal in it", th)
	}

	// Wrong or missing basic auth: 401, nothing recorded or queued.
	var jobsBefore, jobsAfter []atoll.Job
	getJSON(t, e.m.URL+"/api/v1/jobs", &jobsBefore)
	e.az.AddPull(adoOrg, adoProject, adoRepo, azuretest.Pull{Number: 9, Author: "mallory@acme.example", SourceRef: "evil", TargetRef: "main",
		HeadSHA: e.base, BaseSHA: e.base, Changes: []azuretest.Change{{Path: "/staging/main.tf"}}})
	for _, creds := range [][2]string{{adoHookUser, "wrong"}, {"", ""}, {"wrong", adoHookPass}} {
		if code := e.hook("pullrequest.created.json", e.pullEdit(9), creds[0], creds[1]); code != http.StatusUnauthorized {
			t.Fatalf("webhook with credentials %q: status %d; want 401", creds, code)
		}
	}
	var pulls []atoll.Pull
	getJSON(t, e.m.URL+"/api/v1/pulls", &pulls)
	for _, p := range pulls {
		if p.Number == 9 {
			t.Fatalf("a refused webhook recorded pull #9: %+v", p)
		}
	}
	getJSON(t, e.m.URL+"/api/v1/jobs", &jobsAfter)
	if len(jobsAfter) != len(jobsBefore) {
		t.Fatalf("jobs after refused webhooks = %d; want %d", len(jobsAfter), len(jobsBefore))
	}

	// Apply, answered in its thread; the apply status follows.
	e.comment(1, "atlantis apply")
	mustContain(t, "apply reply", e.waitComment(1, 4), "Apply complete!", "staging", "production")
	eventually(t, 10*time.Second, "apply status", func() bool { return e.status(1, "atlantis/apply") == "succeeded" })

	// The dashboard shows the Azure pull request under its three-part name.
	resp, err := authClient.Get(fmt.Sprintf("%s/repos/%s/%s/pulls/1", e.m.URL, url.PathEscape(adoOrg+"/"+adoProject), adoRepo))
	if err != nil {
		t.Fatal(err)
	}
	page := readAll(t, resp)
	if resp.StatusCode != http.StatusOK {
		t.Fatalf("PR page: %d\n%s", resp.StatusCode, page)
	}
	mustContain(t, "PR page", page, full, "staging", "production")

	// Completing the pull request releases its locks.
	if code := e.hook("pullrequest.updated.json", func(p map[string]any) {
		e.setPull(p["resource"].(map[string]any), 1)
		p["resource"].(map[string]any)["status"] = "completed"
	}, adoHookUser, adoHookPass); code != http.StatusOK {
		t.Fatalf("completed webhook: %d", code)
	}
	eventually(t, 10*time.Second, "locks released", func() bool {
		getJSON(t, e.m.URL+"/api/v1/locks", &locks)
		return len(locks) == 0
	})
}

// Apply requirements read Azure's votes: an approval by someone other than
// the author meets `approved`; "waiting for author" blocks it again.
func TestAzureDevOpsApplyRequirements(t *testing.T) {
	e := newADOE2E(t, map[string]string{
		"atlantis.yaml":   "version: 3\nprojects:\n- dir: staging\n  apply_requirements: [approved, mergeable]\n",
		"staging/main.tf": tfProject("staging", 1),
	}, func(m *main.Main) { allowRepoSettings(&m.Config) })
	e.open(1, "grow", map[string]string{"staging/main.tf": tfProject("staging", 2)})
	mustContain(t, "autoplan", e.waitComment(1, 1), "Plan: 2 to add")

	e.comment(1, "atlantis apply")
	mustContain(t, "refused apply", e.waitComment(1, 2), "approved")

	e.az.SetVote(adoOrg, adoProject, adoRepo, 1, "alice@acme.example", 10) // the author's own vote does not count
	e.comment(1, "atlantis apply")
	mustContain(t, "apply approved by the author only", e.waitComment(1, 3), "approved")

	e.az.SetVote(adoOrg, adoProject, adoRepo, 1, "bob@acme.example", 10)
	e.az.SetVote(adoOrg, adoProject, adoRepo, 1, "carol@acme.example", -5)
	e.comment(1, "atlantis apply")
	mustContain(t, "apply while carol waits for the author", e.waitComment(1, 4), "approved")

	// A required build policy that has not passed blocks completion while
	// the merge itself is clean: mergeable follows the policy.
	build := e.az.AddPolicy(adoOrg, adoProject, adoRepo, azuretest.Policy{Type: "build", Evaluation: "rejected"})
	apply := e.az.AddPolicy(adoOrg, adoProject, adoRepo, azuretest.Policy{Type: "status", StatusToCheck: "Atlantis Bot/atlantis/apply"})
	e.az.SetVote(adoOrg, adoProject, adoRepo, 1, "carol@acme.example", 0)
	e.comment(1, "atlantis apply")
	mustContain(t, "apply while a required build fails", e.waitComment(1, 5), "mergeable")

	// With the build passing, the required status policy on Atoll's own
	// apply status (the string docs/vcs-setup.md gives) does not block the
	// apply that sets it, and the apply's success satisfies it.
	e.az.SetPolicyEvaluation(adoOrg, adoProject, adoRepo, build, "approved")
	if got := e.az.PolicyEvaluation(adoOrg, adoProject, adoRepo, 1, apply); got == "approved" {
		t.Fatalf("apply status policy already %s before the apply", got)
	}
	e.comment(1, "atlantis apply")
	mustContain(t, "approved apply", e.waitComment(1, 6), "Apply complete!")
	eventually(t, 10*time.Second, "the apply status policy approved", func() bool {
		return e.az.PolicyEvaluation(adoOrg, adoProject, adoRepo, 1, apply) == "approved"
	})
}

// An atlantis.yaml key Atoll accepts but does not act on is named in one
// warning comment per plan, never dropped silently; the previous warning's
// thread is closed when a new one is posted. Earlier plans stay in view
// without --hide-prev-plan-comments, as in Atlantis.
func TestAzureDevOpsConfigWarnings(t *testing.T) {
	e := newADOE2E(t, map[string]string{
		"atlantis.yaml":   "version: 3\nemoji_reaction: eyes\nprojects:\n- dir: staging\n",
		"staging/main.tf": tfProject("staging", 1),
	}, nil)
	e.open(1, "grow", map[string]string{"staging/main.tf": tfProject("staging", 2)})
	warning := e.waitComment(1, 1)
	mustContain(t, "warning comment", warning, "atlantis.yaml line 2", "`emoji_reaction`", "not act on")
	mustContain(t, "autoplan", e.waitComment(1, 2), "Plan: 2 to add")
	_, first := e.botComments(1)
	var warningThread, planThread int
	for id, cs := range first {
		if strings.Contains(cs[0].Content, "emoji_reaction") {
			warningThread = id
		} else {
			planThread = id
		}
	}
	if warningThread == 0 || planThread == 0 {
		t.Fatalf("Atoll's first threads = %+v; want a warning and a plan", first)
	}

	asked := e.comment(1, "atlantis plan")
	mustContain(t, "second warning", e.waitComment(1, 3), "`emoji_reaction`")
	mustContain(t, "second plan", e.waitComment(1, 4), "Plan: 2 to add")
	if th := e.thread(1, asked); len(th.Comments) != 3 {
		t.Fatalf("the asking thread = %+v; want the warning and the plan as replies", th)
	}
	eventually(t, 10*time.Second, "the first warning's thread closed", func() bool { return e.thread(1, warningThread).Status == "closed" })
	if st := e.thread(1, planThread).Status; st != "active" {
		t.Fatalf("the first plan's thread is %s without --hide-prev-plan-comments; want active", st)
	}
}

// Automerge on Azure DevOps: the completion names the commit that was
// applied, and Atoll says merged only once Azure's queued completion has
// ended.
func TestAzureDevOpsAutomergeQueued(t *testing.T) {
	e := newADOE2E(t, map[string]string{
		"atlantis.yaml":   "version: 3\nautomerge: true\nprojects:\n- dir: staging\n",
		"staging/main.tf": tfProject("staging", 1),
	}, nil)
	sha := e.open(1, "scale-staging", map[string]string{"staging/main.tf": tfProject("staging", 2)})
	mustContain(t, "autoplan", e.waitComment(1, 1), "Plan: 2 to add")
	e.az.SetCompletionPolls(adoOrg, adoProject, adoRepo, 1, 2)
	e.comment(1, "atlantis apply")
	mustContain(t, "apply", e.waitComment(1, 2), "Apply complete!")
	mustContain(t, "automerge", e.waitComment(1, 3), "Automatically merged")
	if got := e.az.Pull(adoOrg, adoProject, adoRepo, 1); got.Status != "completed" {
		t.Fatalf("Atoll said merged while the pull request is %s (mergeStatus %s)", got.Status, got.MergeStatus)
	}
	for _, c := range e.az.Calls() {
		if c.Method == "PATCH" && strings.Contains(string(c.Body), `"completed"`) && !strings.Contains(string(c.Body), sha) {
			t.Errorf("completion body %s; want the applied commit %s", c.Body, sha)
		}
	}
}

// A completion Azure DevOps still has queued after Atoll's bounded wait
// (30 seconds) is reported as queued, not as merged.
func TestAzureDevOpsAutomergeStillQueued(t *testing.T) {
	e := newADOE2E(t, map[string]string{
		"atlantis.yaml":   "version: 3\nautomerge: true\nprojects:\n- dir: staging\n",
		"staging/main.tf": tfProject("staging", 1),
	}, nil)
	e.open(1, "scale-staging", map[string]string{"staging/main.tf": tfProject("staging", 2)})
	mustContain(t, "autoplan", e.waitComment(1, 1), "Plan: 2 to add")
	e.az.SetCompletionPolls(adoOrg, adoProject, adoRepo, 1, 1000)
	e.comment(1, "atlantis apply")
	mustContain(t, "apply", e.waitComment(1, 2), "Apply complete!")
	got := e.waitComment(1, 3)
	mustContain(t, "automerge", got, "Automerge queued, not merged yet", "queued the completion")
	if strings.Contains(got, "Automatically merged") {
		t.Fatalf("automerge comment: %s", got)
	}
}
