package terraform

import (
	"os"
	"path/filepath"
	"strings"
)

// Inherited from the server's environment: what terraform and its providers
// need (paths, proxies, CA certificates, cloud credentials) and nothing else,
// so that Atoll's own secrets never reach user-controlled configurations.
var (
	inheritNames = []string{
		"PATH", "HOME", "TMPDIR", "USER", "LANG",
		"HTTP_PROXY", "HTTPS_PROXY", "NO_PROXY", "http_proxy", "https_proxy", "no_proxy",
		"SSL_CERT_FILE", "SSL_CERT_DIR",
	}
	inheritPrefixes = []string{"TF_", "AWS_", "GOOGLE_", "ARM_"}
	// Per-project settings that a server-wide value would get wrong: a shared
	// data dir or a forced workspace would cross projects. Runner.Env may
	// still set them.
	neverInherit = []string{"TF_DATA_DIR", "TF_WORKSPACE"}
)

// Environ is the environment terraform runs with: allowlisted variables of
// the current process, the automation settings, then r.Env and r.RunEnv,
// later entries replacing earlier ones with the same key.
func (r Runner) Environ() []string {
	var env []string
	for _, kv := range os.Environ() {
		if inherited(envKey(kv)) {
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

func inherited(key string) bool {
	for _, n := range neverInherit {
		if key == n {
			return false
		}
	}
	for _, n := range inheritNames {
		if key == n {
			return true
		}
	}
	for _, p := range inheritPrefixes {
		if strings.HasPrefix(key, p) {
			return true
		}
	}
	return false
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
