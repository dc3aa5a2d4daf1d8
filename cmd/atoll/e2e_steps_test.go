package main_test

import (
	"fmt"
	"strings"
	"testing"

	"github.com/atollhq/atoll"
)

// A custom workflow's steps run in order through a GitHub pull request: an
// env step from a command and a multienv step set variables for the run
// step and Terraform; the run step sees Atlantis's variables and writes to
// the job's log and the comment; a failing run step fails its project only;
// the apply stage runs its steps too, also after a restart.
func TestCustomWorkflowSteps(t *testing.T) {
	e := newE2EConfigured(t, allowRepoSettings)
	t.Setenv("VAULT_ADDR", "https://vault.example")
	config := `version: 3
projects:
  - name: scripted
    dir: staging
    workflow: scripted
  - name: broken
    dir: production
    workflow: broken
workflows:
  scripted:
    plan:
      steps:
        - env:
            name: FROM_CMD
            command: echo "cmd-$PULL_NUM"
        - multienv: echo 'TF_VAR_label=from-multienv,OTHER=x'
        - init
        - run: echo "run-step pull=$PULL_NUM ws=$WORKSPACE plan=$(basename "$PLANFILE") env=$FROM_CMD vault=$VAULT_ADDR"
        - run: printf 'args=[%s]\n' "$COMMENT_ARGS"
        - plan
    apply:
      steps:
        - run: echo "applying $(basename "$PLANFILE")"
        - apply
  broken:
    plan:
      steps:
        - run: echo broken-step-output; exit 3
        - plan
`
	staging := `variable "label" {
  type = string
}
resource "terraform_data" "app" {
  input = var.label
}
`
	e.open(1, "steps", map[string]string{"atlantis.yaml": config, "staging/main.tf": staging, "production/main.tf": tfProject("production", 2)},
		"staging/main.tf", "production/main.tf")
	c := e.waitComment(1, 1)
	mustContain(t, "autoplan comment", c, "run-step pull=1 ws=default plan=scripted-default.tfplan env=cmd-1 vault=https://vault.example", "args=[]",
		"Dynamic environment variables added:", "TF_VAR_label", `input  = "from-multienv"`, "Plan: 1 to add",
		"broken-step-output", "exit code 3")
	if strings.Contains(c, "cmd-1\n") && !strings.Contains(c, "env=cmd-1") {
		t.Errorf("the env step's value was shown on its own:\n%s", c)
	}

	var jobs []atoll.Job
	getJSON(t, e.m.URL+"/api/v1/jobs?repo=acme/infra&pull=1&kind=plan", &jobs)
	states := map[string]string{}
	var scripted atoll.Job
	for _, j := range jobs {
		states[j.Project] = j.State
		if j.Project == "scripted" {
			scripted = j
		}
	}
	if states["scripted"] != atoll.JobSucceeded || states["broken"] != atoll.JobFailed {
		t.Fatalf("plan jobs: %v; want scripted succeeded, broken failed", states)
	}
	resp, err := authClient.Get(fmt.Sprintf("%s/api/v1/jobs/%d/log", e.m.URL, scripted.ID))
	if err != nil {
		t.Fatal(err)
	}
	log := readAll(t, resp)
	mustContain(t, "scripted plan log", log, "env: FROM_CMD set from", "Dynamic environment variables added:", "run-step pull=1 ws=default", "Plan: 1 to add")

	// Comment arguments reach run steps escaped, in COMMENT_ARGS only.
	e.comment(1, "atlantis plan -p scripted -- -refresh=false")
	mustContain(t, "plan with arguments", e.waitComment(1, 2), `args=[\-\r\e\f\r\e\s\h\=\f\a\l\s\e]`, "Plan: 1 to add")

	// The steps are stored with the jobs: after a restart, the apply job
	// made from the stored plan job runs the workflow's apply stage.
	e.m.Close()
	e.start()
	e.comment(1, "atlantis apply -p scripted")
	mustContain(t, "apply comment", e.waitComment(1, 3), "applying scripted-default.tfplan", "Apply complete!")
}
