package git_test

import (
	"context"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/atollhq/atoll/git"
)

func run(t *testing.T, dir string, args ...string) string {
	t.Helper()
	env := []string{"GIT_AUTHOR_NAME=T", "GIT_AUTHOR_EMAIL=t@x", "GIT_COMMITTER_NAME=T", "GIT_COMMITTER_EMAIL=t@x"}
	out, err := git.Run(context.Background(), dir, env, args...)
	if err != nil {
		t.Fatal(err)
	}
	return out
}

// source makes a repository with main (a.txt=1) and two branches.
func source(t *testing.T) (dir, b1, b2, mainSHA string) {
	dir = filepath.Join(t.TempDir(), "src")
	os.MkdirAll(dir, 0o755)
	write := func(name, body string) { os.WriteFile(filepath.Join(dir, name), []byte(body), 0o644) }
	run(t, dir, "init", "--quiet", "--initial-branch=main")
	write("a.txt", "1")
	run(t, dir, "add", "-A")
	run(t, dir, "commit", "--quiet", "-m", "one")
	run(t, dir, "checkout", "--quiet", "-b", "b1")
	write("b.txt", "from b1")
	run(t, dir, "add", "-A")
	run(t, dir, "commit", "--quiet", "-m", "b1")
	b1 = run(t, dir, "rev-parse", "HEAD")
	run(t, dir, "checkout", "--quiet", "-b", "b2", "main")
	write("a.txt", "2")
	run(t, dir, "commit", "--quiet", "-am", "b2")
	b2 = run(t, dir, "rev-parse", "HEAD")
	run(t, dir, "checkout", "--quiet", "main")
	write("c.txt", "on main")
	run(t, dir, "add", "-A")
	run(t, dir, "commit", "--quiet", "-m", "main moves")
	return dir, b1, b2, run(t, dir, "rev-parse", "HEAD")
}

func read(t *testing.T, dir, name string) string {
	b, _ := os.ReadFile(filepath.Join(dir, name))
	return string(b)
}

func TestCheckoutReusesPooledDirs(t *testing.T) {
	ctx := context.Background()
	src, b1, b2, _ := source(t)
	w := &git.Workdirs{Root: t.TempDir(), Strategy: git.StrategyBranch}
	spec := func(pull int, sha string) git.Spec {
		return git.Spec{Key: "local/src", Remote: git.Remote{URL: "file://" + src}, Pull: pull, Workspace: "default", HeadSHA: sha, BaseRef: "main"}
	}
	d1, release1, err := w.Checkout(ctx, spec(1, b1))
	if err != nil {
		t.Fatal(err)
	}
	if read(t, d1, "b.txt") != "from b1" {
		t.Fatal("b1 not checked out")
	}
	os.WriteFile(filepath.Join(d1, "stray.tfplan"), []byte("x"), 0o644)
	os.MkdirAll(filepath.Join(d1, ".terraform"), 0o755)
	// While leased, another checkout gets a different directory.
	d2, release2, err := w.Checkout(ctx, spec(2, b2))
	if err != nil {
		t.Fatal(err)
	}
	if d2 == d1 {
		t.Fatal("a leased checkout was handed out twice")
	}
	release1()
	release2()
	// Pull 1 again gets its own previous checkout back, cleaned, .terraform kept.
	d3, release3, err := w.Checkout(ctx, spec(1, b2))
	if err != nil {
		t.Fatal(err)
	}
	defer release3()
	if d3 != d1 {
		t.Fatalf("pull 1 got %s, want its previous checkout %s", d3, d1)
	}
	if read(t, d3, "a.txt") != "2" || read(t, d3, "b.txt") != "" {
		t.Fatal("checkout not moved to b2")
	}
	if _, err := os.Stat(filepath.Join(d3, "stray.tfplan")); err == nil {
		t.Fatal("untracked file survived the checkout")
	}
	if _, err := os.Stat(filepath.Join(d3, ".terraform")); err != nil {
		t.Fatal(".terraform was cleaned away")
	}
}

func TestCheckoutMergeStrategyAndErrors(t *testing.T) {
	ctx := context.Background()
	src, b1, _, _ := source(t)
	w := &git.Workdirs{Root: t.TempDir(), Strategy: git.StrategyMerge}
	d, release, err := w.Checkout(ctx, git.Spec{Key: "local/src", Remote: git.Remote{URL: "file://" + src}, Pull: 1, Workspace: "default", HeadSHA: b1, BaseRef: "main"})
	if err != nil {
		t.Fatal(err)
	}
	release()
	if read(t, d, "b.txt") != "from b1" || read(t, d, "c.txt") != "on main" {
		t.Fatal("merge strategy did not merge the head onto the base")
	}
	cases := []git.Spec{
		{Key: "local/src", Remote: git.Remote{URL: "file://" + src}, Pull: 1, Workspace: "default", HeadSHA: strings.Repeat("a", 40)},
		{Key: "../escape", Remote: git.Remote{URL: "file://" + src}, Pull: 1, Workspace: "default", HeadSHA: b1},
		{Key: "local/src", Remote: git.Remote{URL: "file://" + src}, Pull: 1, Workspace: "default"},
	}
	for _, s := range cases {
		if _, _, err := w.Checkout(ctx, s); err == nil {
			t.Errorf("checkout %+v succeeded", s)
		}
	}
}

func TestNewRemoteMovesCredentialsToHeader(t *testing.T) {
	r, err := git.NewRemote("https://x-access-token:s3cret@github.com/acme/infra.git")
	if err != nil {
		t.Fatal(err)
	}
	if strings.Contains(r.URL, "s3cret") || r.URL != "https://github.com/acme/infra.git" {
		t.Fatalf("URL kept the secret: %s", r.URL)
	}
	if len(r.Env) != 3 || !strings.HasPrefix(r.Env[2], "GIT_CONFIG_VALUE_0=Authorization: Basic ") {
		t.Fatalf("env = %v", r.Env)
	}
	plain, _ := git.NewRemote("file:///srv/repo")
	if plain.URL != "file:///srv/repo" || plain.Env != nil {
		t.Fatalf("file remote = %+v", plain)
	}
}

func TestNewRemoteAuthorization(t *testing.T) {
	r, err := git.NewRemoteAuthorization("https://dev.azure.com/o/p/_git/r", "Bearer eyJ0eXAi")
	if err != nil {
		t.Fatal(err)
	}
	if r.URL != "https://dev.azure.com/o/p/_git/r" || len(r.Env) != 3 || r.Env[2] != "GIT_CONFIG_VALUE_0=Authorization: Bearer eyJ0eXAi" {
		t.Fatalf("remote = %+v", r)
	}
	for _, bad := range [][2]string{
		{"https://u:p@dev.azure.com/o/p/_git/r", "Bearer x"}, // credentials twice
		{"file:///srv/repo", "Bearer x"},
		{"https://dev.azure.com/o/p/_git/r", ""},
		{"https://dev.azure.com/o/p/_git/r", "Bearer x\r\nX-Other: y"},
	} {
		if _, err := git.NewRemoteAuthorization(bad[0], bad[1]); err == nil || strings.Contains(err.Error(), "Bearer") {
			t.Errorf("NewRemoteAuthorization(%q, %q) err = %v; want an error without the secret", bad[0], bad[1], err)
		}
	}
}
