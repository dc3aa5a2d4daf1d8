package main_test

import (
	"archive/zip"
	"bytes"
	"fmt"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"runtime"
	"strings"
	"testing"
	"time"

	"github.com/atollhq/atoll"
	main "github.com/atollhq/atoll/cmd/atoll"
)

// tfReleases is a release server laid out like releases.hashicorp.com, as
// hc-install reads it, that has Terraform 1.6.0 only: a zip holding a
// "terraform" that says it is 1.6.0 and otherwise runs the real binary (so
// plans are real). It serves no signed SHA256SUMS: the server under test
// installs with --tf-download-skip-verify (signed releases are tested in
// package tfinstall, with a key made in the test).
func tfReleases(t *testing.T, real string) *httptest.Server {
	t.Helper()
	wrapper := fmt.Sprintf(`#!/bin/sh
if [ "$1" = version ]; then
  if [ "$2" = -json ]; then echo '{"terraform_version":"1.6.0"}'; else echo 'Terraform v1.6.0'; fi
  exit 0
fi
exec %q "$@"
`, real)
	var buf bytes.Buffer
	zw := zip.NewWriter(&buf)
	w, _ := zw.Create("terraform")
	w.Write([]byte(wrapper))
	if err := zw.Close(); err != nil {
		t.Fatal(err)
	}
	name := fmt.Sprintf("terraform_1.6.0_%s_%s.zip", runtime.GOOS, runtime.GOARCH)
	serve := func(typ, body string) http.HandlerFunc {
		return func(w http.ResponseWriter, _ *http.Request) {
			w.Header().Set("Content-Type", typ)
			fmt.Fprint(w, body)
		}
	}
	mux := http.NewServeMux()
	mux.Handle("/terraform/index.json", serve("application/json", `{"name":"terraform","versions":{"1.6.0":{},"1.5.7":{}}}`))
	mux.Handle("/terraform/1.6.0/index.json", serve("application/json", fmt.Sprintf(
		`{"name":"terraform","version":"1.6.0","builds":[{"os":%q,"arch":%q,"filename":%q,"url":"https://releases.hashicorp.com/terraform/1.6.0/%s"}]}`,
		runtime.GOOS, runtime.GOARCH, name, name)))
	mux.Handle("/terraform/1.6.0/"+name, serve("application/zip", buf.String()))
	srv := httptest.NewServer(mux)
	t.Cleanup(srv.Close)
	return srv
}

// Two projects asking for different Terraform versions each run theirs:
// 1.5.7 from --tf-bin-dir (the real binary), ~> 1.6.0 downloaded from the
// release server. Run steps see the selected version in
// ATLANTIS_TERRAFORM_VERSION and as `terraform` on PATH; --terraform-bin
// (here a 1.2.0 that must not run) serves neither.
func TestTerraformVersionsPerProject(t *testing.T) {
	real := terraformBin(t)
	binDir := t.TempDir()
	if err := os.Symlink(real, filepath.Join(binDir, "terraform1.5.7")); err != nil {
		t.Fatal(err)
	}
	other := filepath.Join(t.TempDir(), "terraform")
	os.WriteFile(other, []byte("#!/bin/sh\necho 'Terraform v1.2.0'\nexit 1\n"), 0o755)
	releases := tfReleases(t, real)
	e := newE2EConfigured(t, func(c *main.Config) {
		allowRepoSettings(c)
		c.TerraformBin, c.TFBinDir, c.TFDownloadURL = other, binDir, releases.URL
		c.TFDownloadSkipVerify = true
	})
	config := `version: 3
projects:
  - name: old
    dir: staging
    terraform_version: 1.5.7
    workflow: versioned
  - name: new
    dir: production
    terraform_version: "~> 1.6.0"
    workflow: versioned
  - name: future
    dir: modules/x
    terraform_version: ">= 1.7"
workflows:
  versioned:
    plan:
      steps:
        - init
        - run: echo "tfv=$ATLANTIS_TERRAFORM_VERSION"; terraform version
        - plan
    apply:
      steps:
        - run: echo "applying-with=$ATLANTIS_TERRAFORM_VERSION"
        - apply
`
	e.open(1, "versions", map[string]string{
		"atlantis.yaml":      config,
		"staging/main.tf":    tfProject("staging", 2),
		"production/main.tf": tfProject("production", 3),
	}, "staging/main.tf", "production/main.tf")
	var all string
	eventually(t, 120*time.Second, "both plans", func() bool {
		all = strings.Join(e.gh.pullComments(1), "\n")
		return strings.Contains(all, "Plan: 2 to add") && strings.Contains(all, "Plan: 3 to add")
	})
	mustContain(t, "plans", all, "tfv=1.5.7", "Terraform v1.5.7", "tfv=1.6.0", "Terraform v1.6.0")
	if strings.Contains(all, "1.2.0") {
		t.Errorf("--terraform-bin ran:\n%s", all)
	}
	st, err := os.Stat(filepath.Join(binDir, "terraform1.6.0"))
	if err != nil || st.Mode().Perm() != 0o755 {
		t.Fatalf("downloaded terraform1.6.0: %v, %v", st, err)
	}
	// The job log of the plan running the unverified download says so; the
	// one running the operator's binary does not.
	const warning = "Warning: terraform1.6.0 was downloaded without checking its release's signature or checksums (--tf-download-skip-verify)."
	var plans []atoll.Job
	getJSON(t, e.m.URL+"/api/v1/jobs?kind=plan", &plans)
	if len(plans) != 2 {
		t.Fatalf("%d plan jobs, want old's and new's", len(plans))
	}
	for _, j := range plans {
		log := demoGetText(t, fmt.Sprintf("%s/api/v1/jobs/%d/log", e.m.URL, j.ID))
		if got, want := strings.Contains(log, warning), j.Project == "new"; got != want {
			t.Errorf("plan of %s: warning in its log %v, want %v:\n%s", j.Project, got, want, log)
		}
	}

	// version names each project's own binary.
	n0 := len(e.gh.pullComments(1))
	e.comment(1, "atlantis version")
	mustContain(t, "version", e.waitComment(1, n0+1), "workspace: `default` project: `new`: Terraform `1.6.0`", "Terraform `1.5.7`")

	// A newer version meeting ~> 1.6.0 installed after the plan: the apply
	// still runs the plan's 1.6.0 (a plan file applies only with the
	// Terraform that made it).
	newer := filepath.Join(binDir, "terraform1.6.5")
	os.WriteFile(newer, []byte("#!/bin/sh\necho 'Terraform v1.6.5'\nexit 1\n"), 0o755)
	n := len(e.gh.pullComments(1))
	e.comment(1, "atlantis apply -p new")
	applied := e.waitComment(1, n+1)
	mustContain(t, "apply", applied, "applying-with=1.6.0", "Apply complete! Resources: 3 added")

	// Nothing installed or released satisfies >= 1.7: the comment says
	// what the project asks for and what there is.
	n = len(e.gh.pullComments(1))
	e.comment(1, "atlantis plan -p future")
	mustContain(t, "refusal", e.waitComment(1, n+1), "asks for Terraform >= 1.7 (terraform_version)", "installed: 1.6.5, 1.6.0, 1.5.7", "none released meets it")
}
