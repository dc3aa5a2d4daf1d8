package main

import (
	"errors"
	"flag"
	"io"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"
)

// `atoll worker`'s flags: required ones, checks, the environment, and
// exit code 2 for a command line that is wrong.
func TestWorkerFlags(t *testing.T) {
	env := func(m map[string]string) func(string) string { return func(k string) string { return m[k] } }
	for _, tc := range []struct {
		args []string
		env  map[string]string
		want string // in the error; "" for none
	}{
		{nil, nil, "--server is required"},
		{[]string{"--server", "http://a"}, nil, "--token-file is required"},
		{[]string{"--server", "http://a", "--token-file", "f"}, nil, "--pool is required"},
		{[]string{"--server", "ftp://a", "--token-file", "f", "--pool", "p"}, nil, "not an http(s) URL"},
		{[]string{"--server", "https://u:p@a", "--token-file", "f", "--pool", "p"}, nil, "without credentials"},
		{[]string{"--server", "http://a", "--token-file", "f", "--pool", "p", "--concurrency", "65"}, nil, "--concurrency must be between 1 and 64"},
		{[]string{"--server", "http://a", "--token-file", "f", "--pool", "p", "--log-level", "loud"}, nil, "--log-level"},
		{[]string{"--server", "http://a", "--token-file", "f", "--pool", "p", "extra"}, nil, "unexpected argument"},
		{nil, map[string]string{"ATOLL_SERVER": "http://a,https://b/", "ATOLL_TOKEN_FILE": "f", "ATOLL_POOL": "p", "ATOLL_CONCURRENCY": "x"}, "ATOLL_CONCURRENCY"},
		{[]string{"--pool", "cli"}, map[string]string{"ATOLL_SERVER": "http://a,https://b/", "ATOLL_TOKEN_FILE": "f", "ATOLL_POOL": "env"}, ""},
	} {
		var c workerConfig
		err := c.parse(tc.args, env(tc.env), io.Discard)
		if tc.want == "" {
			if err != nil {
				t.Errorf("%v %v: %v", tc.args, tc.env, err)
			}
			continue
		}
		var usage usageError
		if err == nil || !strings.Contains(err.Error(), tc.want) || !errors.As(err, &usage) {
			t.Errorf("%v %v: err %v, want a usage error with %q", tc.args, tc.env, err, tc.want)
		}
	}
	var c workerConfig
	err := c.parse([]string{"--pool", "cli", "--stop-timeout", "1m"}, env(map[string]string{"ATOLL_SERVER": "http://a,https://b/", "ATOLL_TOKEN_FILE": "f", "ATOLL_POOL": "env"}), io.Discard)
	if err != nil {
		t.Fatal(err)
	}
	if c.Pool != "cli" || strings.Join(c.Servers, " ") != "http://a https://b" || c.Concurrency != 1 || c.StopTimeout != time.Minute || c.TerraformBin != "terraform" {
		t.Fatalf("%+v", c)
	}
	if err := c.parse([]string{"-h"}, env(nil), io.Discard); !errors.Is(err, flag.ErrHelp) {
		t.Fatalf("-h: %v", err)
	}
}

// The token file's secret is trimmed; an empty one is refused.
func TestWorkerTokenFile(t *testing.T) {
	f := filepath.Join(t.TempDir(), "token")
	os.WriteFile(f, []byte("  s3cret\n"), 0o600)
	if tok, err := readToken(f); err != nil || tok != "s3cret" {
		t.Fatalf("%q %v", tok, err)
	}
	os.WriteFile(f, []byte("\n"), 0o600)
	if _, err := readToken(f); err == nil || !strings.Contains(err.Error(), "is empty") {
		t.Fatalf("empty: %v", err)
	}
}

// `atoll worker` with a refused token exits 1 with the server's message,
// and removes the data dir it made.
func TestWorkerRefusedTokenExits(t *testing.T) {
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		w.WriteHeader(http.StatusUnauthorized)
		w.Write([]byte(`{"error":"worker token revoked"}`))
	}))
	defer srv.Close()
	tok := filepath.Join(t.TempDir(), "token")
	os.WriteFile(tok, []byte("s3cret\n"), 0o600)
	t.Setenv("TMPDIR", t.TempDir())
	err := run([]string{"worker", "--server", srv.URL, "--token-file", tok, "--pool", "p", "--terraform-bin", "true", "--log-level", "error"}, io.Discard, func(string) string { return "" })
	var out strings.Builder
	if code := exitCode(err, &out); code != 1 || !strings.Contains(out.String(), "worker token revoked") {
		t.Fatalf("exit %d: %s", code, out.String())
	}
	if left, _ := filepath.Glob(filepath.Join(os.Getenv("TMPDIR"), "atoll-worker-*")); len(left) != 0 {
		t.Fatalf("left %v", left)
	}
}
