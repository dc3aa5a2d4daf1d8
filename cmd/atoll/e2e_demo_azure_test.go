package main_test

import (
	"net/http"
	"strings"
	"testing"
	"time"

	"github.com/atollhq/atoll"
	main "github.com/atollhq/atoll/cmd/atoll"
)

// --demo-vcs azuredevops seeds the demo repository under an Azure DevOps
// name (demo-org/demo-project/infra): it autoplans, and its page and API
// answer under that three-part name. Bad uses of the flag are refused.
func TestDemoNamedAsAzureDevOps(t *testing.T) {
	for _, c := range []struct {
		args []string
		want string
	}{
		{[]string{"--demo", "--demo-vcs", "gitlab"}, "--demo-vcs"},
		{[]string{"--repo-allowlist", "*", "--demo-vcs", "azuredevops"}, "--demo-vcs needs --demo"},
	} {
		var cfg main.Config
		if err := cfg.Parse(c.args, envOf(nil)); err == nil || !strings.Contains(err.Error(), c.want) {
			t.Errorf("Parse(%v) = %v; want an error containing %q", c.args, err, c.want)
		}
	}
	var cfg main.Config
	if err := cfg.Parse([]string{"--demo", "--demo-vcs", "azuredevops"}, envOf(nil)); err != nil {
		t.Fatal(err)
	}
	if cfg.RepoAllowlist != "dev.azure.com/demo-org/demo-project/*" {
		t.Fatalf("the Azure demo's allowlist = %q", cfg.RepoAllowlist)
	}

	testEnv(t)
	m := startMain(t, t.TempDir(), func(c *main.Config) { c.Demo, c.DemoVCS = true, atoll.VCSAzureDevOps })
	t.Cleanup(func() { m.Close() })
	const full = "demo-org/demo-project/infra"
	eventually(t, 120*time.Second, "the Azure-named demo's autoplan", func() bool {
		var jobs []atoll.Job
		getJSON(t, m.URL+"/api/v1/jobs?repo="+full+"&pull=1&kind=plan&state=succeeded", &jobs)
		return len(jobs) > 0
	})
	// The plan's comment follows its job's end: the page is read until it shows.
	var page string
	eventually(t, 30*time.Second, "the Azure-named demo's page with the plan", func() bool {
		resp, err := authClient.Get(m.URL + "/repos/demo-org%2Fdemo-project/infra/pulls/1")
		if err != nil {
			t.Fatal(err)
		}
		page = readAll(t, resp)
		if resp.StatusCode != http.StatusOK {
			t.Fatalf("PR page: %d", resp.StatusCode)
		}
		return strings.Contains(page, "atlantis apply -p staging")
	})
	mustContain(t, "the Azure-named demo's page", page, full, "staging")
}
