package terraform

import (
	"os"
	"path/filepath"
	"strings"
)

// Terraform and workflow run steps inherit the server's environment, as in
// Atlantis (VAULT_*, AZURE_*, KUBECONFIG, proxies, cloud credentials), minus
// what belongs to Atoll alone:
//   - every ATOLL_* variable: Atoll's flags and secrets (tokens, webhook and
//     session secrets, passwords, the replica's ATOLL_REPLICA_* keys) are all
//     read from ATOLL_* variables;
//   - ATLANTIS_* variables naming a token, secret, password or key, and
//     ATLANTIS_WEBHOOK_HTTP_HEADERS (the notification headers, tokens too):
//     a migrated deployment carries them, and Atoll reads them as its flags
//     when the ATOLL_* ones are unset;
//   - the server's own git credential settings (GIT_CONFIG_*, GIT_ASKPASS):
//     a run gets only its credential helper grant (RunEnv);
//   - per-project settings that a server-wide value would get wrong: a
//     shared data dir or a forced workspace would cross projects (Runner.Env
//     may still set them).
var (
	denyPrefixes = []string{"ATOLL_", "GIT_CONFIG_"}
	denyNames    = []string{"GIT_ASKPASS", "SSH_ASKPASS", "TF_DATA_DIR", "TF_WORKSPACE", "ATLANTIS_WEBHOOK_HTTP_HEADERS", "ATLANTIS_WEBHOOK_HTTP_HEADERS_FILE"}
	// ATLANTIS_* variables are denied when their name holds one of these.
	secretWords = []string{"TOKEN", "SECRET", "PASSWORD", "PASS", "KEY", "CREDENTIAL"}
)

// Environ is the environment terraform and run steps get: the current
// process's environment minus the deny-list, the automation settings, then
// r.Env and r.RunEnv, later entries replacing earlier ones with the same key.
func (r Runner) Environ() []string {
	var env []string
	for _, kv := range os.Environ() {
		if Inherited(envKey(kv)) {
			env = append(env, kv)
		}
	}
	env = append(env, "TF_IN_AUTOMATION=1", "TF_INPUT=0", "CHECKPOINT_DISABLE=1")
	env = append(env, r.Env...)
	env = append(env, r.RunEnv...)
	return dedupEnv(env)
}

func envKey(kv string) string {
	k, _, _ := strings.Cut(kv, "=")
	return k
}

// Inherited reports whether a variable of the server's environment reaches
// terraform and run steps.
func Inherited(key string) bool {
	upper := strings.ToUpper(key)
	for _, p := range denyPrefixes {
		if strings.HasPrefix(upper, p) {
			return false
		}
	}
	for _, n := range denyNames {
		if upper == n {
			return false
		}
	}
	if strings.HasPrefix(upper, "ATLANTIS_") {
		for _, w := range secretWords {
			if strings.Contains(upper, w) {
				return false
			}
		}
	}
	return key != ""
}

// dedupEnv keeps the last value of each key, in first-seen order.
func dedupEnv(env []string) []string {
	idx := make(map[string]int, len(env))
	out := env[:0:0]
	for _, kv := range env {
		k := envKey(kv)
		if i, ok := idx[k]; ok {
			out[i] = kv
			continue
		}
		idx[k] = len(out)
		out = append(out, kv)
	}
	return out
}

// DataDir is terraform's data directory for a project dir: TF_DATA_DIR of
// the environment it runs with (relative to dir), else dir/.terraform.
func (r Runner) DataDir(dir string) string {
	data := ".terraform"
	for _, kv := range r.Environ() {
		if v, ok := strings.CutPrefix(kv, "TF_DATA_DIR="); ok && v != "" {
			data = v
		}
	}
	if !filepath.IsAbs(data) {
		data = filepath.Join(dir, data)
	}
	return data
}
