package main_test

import (
	"strings"
	"testing"

	main "github.com/atollhq/atoll/cmd/atoll"
)

// Comment commands through GitHub: version per planned project, cancel,
// a command --allow-commands leaves out, and one Atoll parses but cannot
// run yet; each gets its reply.
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
	mustContain(t, "version", reply("atlantis version"), "Version for dir: `staging` workspace: `default`: Terraform `1.5.7`")
	v := reply("atlantis version -d production")
	mustContain(t, "version -d", v, "Terraform: `1.5.7`", "No project of this pull request for dir `production` workspace `default` has been planned yet")
	if strings.Contains(v, "`staging`") {
		t.Fatalf("version -d production names staging:\n%s", v)
	}
	mustContain(t, "cancel", reply("atlantis cancel"), "this pull request had no queued commands", "not interrupted")
	mustContain(t, "state rm", reply("atlantis state rm aws_instance.x"),
		`Error: unknown command "state".`, "Available commands(--allow-commands): version, plan, apply, cancel, unlock, import")
	mustContain(t, "import", reply("atlantis import -d staging aws_instance.x i-123"), "`atlantis import` is not supported by Atoll yet", "nothing was run")
	mustContain(t, "help", reply("atlantis"), "cancel ", "import ADDRESS ID")
	if strings.Contains(e.gh.pullComments(1)[n-1], "state rm") {
		t.Fatalf("help lists state, which is not allowed:\n%s", e.gh.pullComments(1)[n-1])
	}
	mustContain(t, "terraform", reply("terraform plan"), "Did you mean to use `atlantis` instead of `terraform`?")
}
