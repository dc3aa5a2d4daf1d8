package main_test

import (
	"bytes"
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/atollhq/atoll"
)

// The outside probe's attack, end to end on the real server, git and
// Terraform: a comment's words after "--" wrote a plan zip over a file the
// commenter chose (atoll.db among them) and an apply with -state-out and
// -backup left the backend's state empty, so the next plan proposed
// creating everything again. Every spelling is now refused with a reply,
// nothing is written outside the job's working directory, and an apply
// with allowed flags writes the state where the backend keeps it.
func TestSecurityCommentArgsCannotWriteFiles(t *testing.T) {
	testEnv(t)
	dataDir := t.TempDir()
	m := startDemo(t, dataDir)
	outside := t.TempDir()
	db := filepath.Join(dataDir, "atoll.db")
	backend := filepath.Join(dataDir, "demo", "state", "staging.tfstate")

	if j := demoWaitJob(t, m, atoll.JobPlan, "staging"); j.State != atoll.JobSucceeded {
		t.Fatalf("autoplan = %+v", j)
	}
	demoWaitIdle(t, m)
	hostile := []struct{ comment, want string }{
		{"atlantis plan -d staging -- -out=" + filepath.Join(outside, "plan.zip"), "Atoll sets -out itself"},
		{"atlantis plan -d staging -- --out " + db, "Atoll sets -out itself"},
		{"atlantis plan -d staging -- -OUT=" + db, "Atoll sets -out itself"},
		{"atlantis plan -d staging -- -target=terraform_data.app -out " + filepath.Join(outside, "b.zip"), "Atoll sets -out itself"},
		{"atlantis apply -d staging -- -state-out=" + filepath.Join(outside, "x.tfstate") + " -backup=" + filepath.Join(outside, "y"), "move Terraform's state"},
		{"atlantis apply -d staging -- --backup " + filepath.Join(outside, "y"), "move Terraform's state"},
		{"atlantis plan -d staging -- -state=" + filepath.Join(outside, "s.tfstate"), "move Terraform's state"},
		{"atlantis plan -d staging -- -generate-config-out=" + filepath.Join(outside, "gen.tf"), "write files"},
		{"atlantis plan -d staging -- -lock=false", "Atoll sets -lock itself"},
		{"atlantis apply -d staging -- " + filepath.Join(outside, "other.tfplan"), "not a flag"},
		{"atlantis plan -d staging -- '-var=x=\x1b[31mred'", "control characters"},
	}
	for _, h := range hostile {
		n := len(demoComments(t, m))
		raw, _ := json.Marshal(map[string]string{"body": h.comment})
		demoPostComment(t, m, string(raw))
		reply := demoWaitReply(t, m, n, "reply to "+h.comment)
		if !strings.Contains(reply, h.want) {
			t.Errorf("reply to %q does not say %q:\n%s", h.comment, h.want, reply)
		}
		demoWaitIdle(t, m)
	}
	if plans := demoJobs(t, m, atoll.JobPlan); len(plans) != 1 {
		t.Errorf("refused comments ran plans: %+v", plans)
	}
	if applies := demoJobs(t, m, atoll.JobApply); len(applies) != 0 {
		t.Errorf("refused comments ran applies: %+v", applies)
	}

	// Allowed flags still reach Terraform, and the state lands in the backend.
	demoComment(t, m, "atlantis apply -d staging -- -lock-timeout=30s -parallelism=2")
	apply := demoWaitJob(t, m, atoll.JobApply, "staging")
	if apply.State != atoll.JobSucceeded {
		t.Fatalf("apply = %+v\n%s", apply, dumpComments(t, m))
	}
	demoWaitLog(t, m, apply.ID, "-lock-timeout=30s -parallelism=2 -input=false -no-color")
	state, err := os.ReadFile(backend)
	if err != nil || !bytes.Contains(state, []byte(`"terraform_data"`)) {
		t.Fatalf("backend state after apply: %v\n%s", err, state)
	}
	demoWaitIdle(t, m)
	demoComment(t, m, "atlantis plan -d staging")
	var replan atoll.Job
	eventually(t, 120*time.Second, "second plan of staging", func() bool {
		plans := demoJobs(t, m, atoll.JobPlan) // newest first
		replan = plans[0]
		return len(plans) == 2 && replan.Final()
	})
	if replan.State != atoll.JobSucceeded || replan.Summary == nil || replan.Summary.Add != 0 {
		t.Errorf("the plan after the apply = %+v (summary %+v), want no additions: the state is where the backend keeps it", replan, replan.Summary)
	}

	// Nothing was written outside, and the database is still a database.
	entries, err := os.ReadDir(outside)
	if err != nil || len(entries) != 0 {
		t.Errorf("files written outside the work dir: %v %v", entries, err)
	}
	head := make([]byte, 16)
	f, err := os.Open(db)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	if _, err := f.Read(head); err != nil || string(head) != "SQLite format 3\x00" {
		t.Errorf("atoll.db header = %q, %v", head, err)
	}
}
