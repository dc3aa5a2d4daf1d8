package markdown_test

import (
	"strings"
	"testing"

	"github.com/atollhq/atoll"
	"github.com/atollhq/atoll/runner/markdown"
)

// A successful import or state rm shows Terraform's output, says it
// succeeded and that the project must be planned again, naming a discarded
// plan; a failure is an error like any other.
func TestImportStateRmResults(t *testing.T) {
	r := markdown.Renderer{}
	imp := one(t, r, atoll.JobImport, markdown.ProjectResult{Dir: "app", Workspace: "default", Output: "Import successful!", PlanDiscarded: true})
	for _, want := range []string{"Ran Import for dir: `app` workspace: `default`", "Import successful!", "**Import successful.**",
		"unapplied plan was discarded", "`atlantis plan -d app`"} {
		if !strings.Contains(imp, want) {
			t.Errorf("import result lacks %q:\n%s", want, imp)
		}
	}
	rm := one(t, r, atoll.JobStateRm, markdown.ProjectResult{Project: "net", Dir: "net", Workspace: "prod", Output: "Removed a.b"})
	for _, want := range []string{"Ran State `rm` for project: `net`", "Removed a.b", "**State rm successful.**", "plan again before applying", "`atlantis plan -p net`"} {
		if !strings.Contains(rm, want) {
			t.Errorf("state rm result lacks %q:\n%s", want, rm)
		}
	}
	if strings.Contains(rm, "discarded") {
		t.Errorf("state rm without a plan says one was discarded:\n%s", rm)
	}
	failed := one(t, r, atoll.JobImport, markdown.ProjectResult{Dir: ".", Workspace: "default", Error: "exit status 1\n\nError: Resource already managed"})
	if !strings.Contains(failed, "**Import Error**") || strings.Contains(failed, "successful") {
		t.Errorf("failed import:\n%s", failed)
	}
}
