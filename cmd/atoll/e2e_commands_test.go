package main_test

import (
	"encoding/json"
	"net/http"
	"net/http/httptest"
	"os/exec"
	"strings"
	"testing"
	"time"

	"github.com/atollhq/atoll"
	main "github.com/atollhq/atoll/cmd/atoll"
)

// Comment commands through GitHub: version per planned project, cancel,
// a command --allow-commands leaves out, and an import of a resource the
// configuration lacks; each gets its reply.
func TestCommentCommandsEndToEnd(t *testing.T) {
	files := map[string]string{"staging/main.tf": tfProject("staging", 1), "production/main.tf": tfProject("production", 1)}
	e := newE2EWith(t, files, func(c *main.Config) {
		c.AllowCommands = []string{"version", "plan", "apply", "unlock", "cancel", "import"}
	})
	e.open(1, "scale-staging", map[string]string{"staging/main.tf": tfProject("staging", 2)}, "staging/main.tf")
	mustContain(t, "autoplan", e.waitComment(1, 1), "Plan: 2 to add")

	n := 1
	reply := func(comment string) string {
		t.Helper()
		e.comment(1, comment)
		n++
		got := e.waitComment(1, n)
		t.Logf("%s ->\n%s", comment, got)
		return got
	}
	tf := terraformBinVersion(t)
	mustContain(t, "version", reply("atlantis version"), "Version for dir: `staging` workspace: `default`: Terraform `"+tf+"`")
	v := reply("atlantis version -d production")
	mustContain(t, "version -d", v, "Terraform: `"+tf+"`", "No project of this pull request for dir `production` workspace `default` has been planned yet")
	if strings.Contains(v, "`staging`") {
		t.Fatalf("version -d production names staging:\n%s", v)
	}
	mustContain(t, "cancel", reply("atlantis cancel"), "this pull request had no queued commands and no running plan", "A running apply is never interrupted")
	mustContain(t, "state rm", reply("atlantis state rm aws_instance.x"),
		`Error: unknown command "state".`, "Available commands(--allow-commands): version, plan, apply, cancel, unlock, import")
	mustContain(t, "import", reply("atlantis import -d staging aws_instance.x i-123"), "Ran Import for dir: `staging` workspace: `default`", "**Import Error**")
	mustContain(t, "help", reply("atlantis"), "cancel ", "import ADDRESS ID")
	if strings.Contains(e.gh.pullComments(1)[n-1], "state rm") {
		t.Fatalf("help lists state, which is not allowed:\n%s", e.gh.pullComments(1)[n-1])
	}
	mustContain(t, "terraform", reply("terraform plan"), "Did you mean to use `atlantis` instead of `terraform`?")
}

// apply --auto-merge-disabled keeps a pull request with automerge: true
// open; --auto-merge-method picks how it is merged.
func TestApplyAutoMergeFlags(t *testing.T) {
	files := map[string]string{"atlantis.yaml": "version: 3\nautomerge: true\nprojects:\n- dir: a\n- dir: b\n",
		"a/main.tf": tfProject("a", 1), "b/main.tf": tfProject("b", 1)}
	e := newE2EWith(t, files, nil)

	e.open(1, "scale-a", map[string]string{"a/main.tf": tfProject("a", 2)}, "a/main.tf")
	mustContain(t, "plan of #1", e.waitComment(1, 1), "Plan: 2 to add")
	e.comment(1, "atlantis apply --auto-merge-disabled")
	mustContain(t, "apply of #1", e.waitComment(1, 2), "Apply complete!")
	// Requests of a pull request run in order: once version has answered,
	// the apply request, automerge included, is over.
	e.comment(1, "atlantis version")
	if got := e.waitComment(1, 3); !strings.Contains(got, "Atoll ") {
		t.Fatalf("third comment on #1 is not the version reply (an automerge?):\n%s", got)
	}
	if m := e.gh.mergesOf(1); len(m) != 0 {
		t.Fatalf("#1 merged despite --auto-merge-disabled: %+v", m)
	}

	e.open(2, "scale-b", map[string]string{"b/main.tf": tfProject("b", 2)}, "b/main.tf")
	mustContain(t, "plan of #2", e.waitComment(2, 1), "Plan: 2 to add")
	e.comment(2, "atlantis apply --auto-merge-method squash")
	mustContain(t, "apply of #2", e.waitComment(2, 2), "Apply complete!")
	mustContain(t, "automerge of #2", e.waitComment(2, 3), "Automatically merged")
	if m := e.gh.mergesOf(2); len(m) != 1 || m[0].Method != "squash" {
		t.Fatalf("merges of #2 = %+v, want one squash", m)
	}
}

// cancel interrupts a running plan (here stuck downloading a module from a
// server that never answers): the job ends canceled, the plan comment
// says so, the cancel reply names it, and its lock is released, as after
// a failed plan (Atlantis's rule).
func TestCancelInterruptsRunningPlan(t *testing.T) {
	slowURL, hit := hangingModuleServer(t)

	files := map[string]string{"staging/main.tf": tfProject("staging", 1)}
	e := newE2EWith(t, files, func(c *main.Config) { c.AllowCommands = []string{"plan", "apply", "cancel", "unlock"} })
	openStuckPlan(t, e, slowURL, hit)
	e.comment(1, "atlantis cancel")
	plan := e.waitComment(1, 1)
	mustContain(t, "plan comment", plan, "Canceled by a cancel comment")
	reply := e.waitComment(1, 2)
	t.Logf("cancel reply:\n%s", reply)
	mustContain(t, "cancel reply", reply, "Interrupted the running plan", "A running apply is never interrupted")

	var jobs []atoll.Job
	getJSON(t, e.m.URL+"/api/v1/jobs?repo=acme/infra&pull=1&kind=plan", &jobs)
	if len(jobs) != 1 || jobs[0].State != atoll.JobCanceled {
		t.Fatalf("plan jobs = %+v, want one canceled", jobs)
	}
	var locks []atoll.Lock
	getJSON(t, e.m.URL+"/api/v1/locks", &locks)
	if len(locks) != 0 {
		t.Fatalf("locks = %+v, want the canceled plan's released", locks)
	}
}

// terraformBinVersion is the version the test Terraform binary reports.
func terraformBinVersion(t *testing.T) string {
	t.Helper()
	out, err := exec.Command(terraformBin(t), "version", "-json").Output()
	if err != nil {
		t.Fatal(err)
	}
	var v struct {
		Version string `json:"terraform_version"`
	}
	if err := json.Unmarshal(out, &v); err != nil || v.Version == "" {
		t.Fatalf("terraform version -json: %v: %s", err, out)
	}
	return v.Version
}

// hangingModuleServer is a module source that never answers (until the
// test ends): a plan using it stays running. hit gets a value when the
// first request arrives.
func hangingModuleServer(t *testing.T) (url string, hit <-chan struct{}) {
	got := make(chan struct{}, 1)
	release := make(chan struct{})
	slow := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		select {
		case got <- struct{}{}:
		default:
		}
		select {
		case <-release:
		case <-r.Context().Done():
		}
	}))
	t.Cleanup(func() { close(release); slow.Close() })
	return slow.URL, got
}

// openStuckPlan opens pull request 1 with staging using the module at
// slowURL and waits until its autoplan is stuck downloading it.
func openStuckPlan(t *testing.T, e *e2e, slowURL string, hit <-chan struct{}) {
	t.Helper()
	stuck := tfProject("staging", 2) + "\nmodule \"slow\" {\n  source = \"" + slowURL + "/mod\"\n}\n"
	e.open(1, "slow-module", map[string]string{"staging/main.tf": stuck}, "staging/main.tf")
	select {
	case <-hit:
	case <-time.After(90 * time.Second):
		t.Fatal("the plan never asked for the module")
	}
}
