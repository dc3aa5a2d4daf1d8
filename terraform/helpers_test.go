package terraform_test

import (
	"os"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/atollhq/atoll/terraform"
)

// binary finds the real terraform the Makefile builds; tests need it.
func binary(t *testing.T) string {
	t.Helper()
	bin := os.Getenv("ATOLL_TEST_TERRAFORM")
	if bin == "" {
		abs, err := filepath.Abs(filepath.Join("..", "bin", "terraform"))
		if err != nil {
			t.Fatal(err)
		}
		bin = abs
	}
	if _, err := os.Stat(bin); err != nil {
		t.Skipf("terraform binary not available (%v); run make or set ATOLL_TEST_TERRAFORM", err)
	}
	return bin
}

// newRunner returns a Runner isolated from the user's terraform settings.
func newRunner(t *testing.T) terraform.Runner {
	t.Helper()
	bin := binary(t)
	cfg := filepath.Join(t.TempDir(), "terraformrc")
	if err := os.WriteFile(cfg, nil, 0o600); err != nil {
		t.Fatal(err)
	}
	return terraform.Runner{
		Bin: bin,
		Env: []string{
			"CHECKPOINT_DISABLE=1",
			"TF_IN_AUTOMATION=1",
			"TF_INPUT=0",
			"TF_CLI_CONFIG_FILE=" + cfg,
		},
		Grace: 10 * time.Second,
	}
}

// project writes main.tf into a fresh directory.
func project(t *testing.T, mainTF string) string {
	t.Helper()
	dir := t.TempDir()
	writeTF(t, dir, mainTF)
	return dir
}

func writeTF(t *testing.T, dir, mainTF string) {
	t.Helper()
	if err := os.WriteFile(filepath.Join(dir, "main.tf"), []byte(mainTF), 0o644); err != nil {
		t.Fatal(err)
	}
}

// lines records emitted lines; emit must never be called concurrently, and
// the recorder checks that.
type lines struct {
	busy sync.Mutex
	mu   sync.Mutex
	all  []terraform.Line
	t    *testing.T
}

func record(t *testing.T) *lines { return &lines{t: t} }

func (l *lines) emit(line terraform.Line) {
	if !l.busy.TryLock() {
		l.t.Error("emit called concurrently")
		return
	}
	defer l.busy.Unlock()
	l.mu.Lock()
	l.all = append(l.all, line)
	l.mu.Unlock()
}

func (l *lines) text(stream string) string {
	l.mu.Lock()
	defer l.mu.Unlock()
	var b strings.Builder
	for _, x := range l.all {
		if stream == "" || x.Stream == stream {
			b.WriteString(x.Text + "\n")
		}
	}
	return b.String()
}

const oneResource = `
resource "terraform_data" "a" {
  input = "hello"
}
`
