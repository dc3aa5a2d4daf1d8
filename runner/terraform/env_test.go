package terraform_test

import (
	"strings"
	"testing"

	"github.com/atollhq/atoll/runner/terraform"
)

func TestEnviron(t *testing.T) {
	t.Setenv("ATOLL_SESSION_SECRET", "s3cret")
	t.Setenv("GITHUB_TOKEN", "ghp_x")
	t.Setenv("TF_DATA_DIR", "/shared/.terraform")
	t.Setenv("TF_WORKSPACE", "prod")
	t.Setenv("TF_LOG", "WARN")
	t.Setenv("AWS_PROFILE", "ci")
	t.Setenv("GOOGLE_APPLICATION_CREDENTIALS", "/creds.json")
	t.Setenv("ARM_CLIENT_ID", "id")
	t.Setenv("TMPDIR", "/tmp/x")
	r := terraform.Runner{Env: []string{"TF_LOG=DEBUG", "TF_DATA_DIR=/job/7/.terraform"}}
	env := map[string]string{}
	for _, kv := range r.Environ() {
		k, v, _ := strings.Cut(kv, "=")
		if _, dup := env[k]; dup {
			t.Errorf("%s appears twice", k)
		}
		env[k] = v
	}
	want := map[string]string{
		"TF_IN_AUTOMATION":               "1",
		"TF_INPUT":                       "0",
		"CHECKPOINT_DISABLE":             "1",
		"TF_LOG":                         "DEBUG", // Env wins
		"TF_DATA_DIR":                    "/job/7/.terraform",
		"AWS_PROFILE":                    "ci",
		"GOOGLE_APPLICATION_CREDENTIALS": "/creds.json",
		"ARM_CLIENT_ID":                  "id",
		"TMPDIR":                         "/tmp/x",
	}
	for k, v := range want {
		if env[k] != v {
			t.Errorf("%s = %q, want %q", k, env[k], v)
		}
	}
	for _, k := range []string{"ATOLL_SESSION_SECRET", "GITHUB_TOKEN", "TF_WORKSPACE"} {
		if _, ok := env[k]; ok {
			t.Errorf("%s inherited", k)
		}
	}
	if env["PATH"] == "" {
		t.Error("PATH missing")
	}
}
