package git

import (
	"context"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"strings"
	"sync"

	"github.com/atollhq/atoll/procs"
)

// Checkout strategies, as in Atlantis.
const (
	StrategyBranch = "branch" // the pull request's head commit as is
	StrategyMerge  = "merge"  // the head commit merged onto the base branch
)

// Workdirs keeps one bare mirror per repository and a pool of checkouts per
// repository. A request leases a checkout for its duration; moving a checkout
// to another commit rewrites only the files that differ, and initialised
// .terraform directories survive, so neither a new commit nor a new pull
// request costs a clone. The pool grows to the number of checkouts in use at
// once, not with the number of open pull requests.
type Workdirs struct {
	Root     string // e.g. <data-dir>/work
	Strategy string
	// Procs records git's process groups (see package procs); nil: not
	// recorded.
	Procs *procs.Registry

	mu      sync.Mutex
	mirrors map[string]*sync.Mutex
	idle    map[string][]string // repository key -> checkouts not leased
	lastUse map[string]string   // checkout -> "pull/workspace" it last held
	created int
}

// Spec says what to check out.
type Spec struct {
	Key       string // stable path fragment of the repository, e.g. github.com/acme/infra
	Remote    Remote
	Pull      int
	Workspace string
	HeadSHA   string
	HeadRef   string
	BaseRef   string
	// ExtraRefs are fetched too, e.g. refs/pull/N/head on GitHub for forks.
	ExtraRefs []string
}

func (w *Workdirs) mirrorLock(key string) *sync.Mutex {
	w.mu.Lock()
	defer w.mu.Unlock()
	if w.mirrors == nil {
		w.mirrors = map[string]*sync.Mutex{}
	}
	m, ok := w.mirrors[key]
	if !ok {
		m = &sync.Mutex{}
		w.mirrors[key] = m
	}
	return m
}

// Checkout leases a checkout of the repository, brings it to s.HeadSHA
// (merged onto the base branch with StrategyMerge) and returns its path and
// the function that gives it back. The caller has it to itself until then.
func (w *Workdirs) Checkout(ctx context.Context, s Spec) (string, func(), error) {
	if s.HeadSHA == "" {
		return "", nil, fmt.Errorf("checkout %s#%d: no head commit", s.Key, s.Pull)
	}
	if !validKey(s.Key) || !validKey(s.Workspace) {
		return "", nil, fmt.Errorf("checkout: invalid repository key or workspace")
	}
	mirror, err := w.syncMirror(ctx, s)
	if err != nil {
		return "", nil, err
	}
	use := fmt.Sprintf("%d/%s", s.Pull, s.Workspace)
	dir := w.lease(s.Key, use)
	release := func() { w.giveBack(s.Key, dir) }
	if err := w.bring(ctx, mirror, dir, s); err != nil {
		// A checkout in an unknown state is not worth keeping.
		os.RemoveAll(dir)
		release()
		return "", nil, err
	}
	return dir, release, nil
}

func (w *Workdirs) bring(ctx context.Context, mirror, dir string, s Spec) error {
	if _, err := os.Stat(filepath.Join(dir, ".git")); err != nil {
		if err := os.MkdirAll(filepath.Dir(dir), 0o755); err != nil {
			return fmt.Errorf("checkout: %w", err)
		}
		os.RemoveAll(dir)
		// --shared borrows the mirror's objects: the clone costs no copying.
		if _, err := w.run(ctx, "", nil, "clone", "--quiet", "--shared", "--no-checkout", mirror, dir); err != nil {
			return fmt.Errorf("checkout %s#%d: %w", s.Key, s.Pull, err)
		}
	}
	if _, err := w.run(ctx, dir, nil, "checkout", "--quiet", "--force", "--detach", s.HeadSHA); err != nil {
		return fmt.Errorf("checkout %s#%d at %s: %w", s.Key, s.Pull, short(s.HeadSHA), err)
	}
	// Keep Terraform's working data (providers, modules) between runs.
	if _, err := w.run(ctx, dir, nil, "clean", "-ffdxq", "-e", ".terraform"); err != nil {
		return fmt.Errorf("checkout clean: %w", err)
	}
	if w.Strategy == StrategyMerge && s.BaseRef != "" {
		return w.merge(ctx, dir, s)
	}
	return nil
}

// lease picks an idle checkout, preferring the one that last held the same
// pull request and workspace (its .terraform is most likely still valid).
func (w *Workdirs) lease(key, use string) string {
	w.mu.Lock()
	defer w.mu.Unlock()
	if w.idle == nil {
		w.idle, w.lastUse = map[string][]string{}, map[string]string{}
	}
	idle := w.idle[key]
	if len(idle) == 0 {
		idle = w.existing(key)
	}
	pick := -1
	for i, d := range idle {
		if w.lastUse[d] == use {
			pick = i
			break
		}
	}
	var dir string
	switch {
	case pick >= 0:
		dir = idle[pick]
		idle = append(idle[:pick], idle[pick+1:]...)
	case len(idle) > 0:
		dir, idle = idle[len(idle)-1], idle[:len(idle)-1]
	default:
		w.created++
		dir = filepath.Join(w.Root, "checkouts", filepath.FromSlash(key), fmt.Sprintf("%d-%d", os.Getpid(), w.created))
	}
	w.idle[key] = idle
	w.lastUse[dir] = use
	return dir
}

// existing adopts the checkouts a previous process left, once per key.
func (w *Workdirs) existing(key string) []string {
	if _, seen := w.idle[key]; seen {
		return nil
	}
	entries, _ := os.ReadDir(filepath.Join(w.Root, "checkouts", filepath.FromSlash(key)))
	var dirs []string
	for _, e := range entries {
		if e.IsDir() {
			dirs = append(dirs, filepath.Join(w.Root, "checkouts", filepath.FromSlash(key), e.Name()))
		}
	}
	return dirs
}

func (w *Workdirs) giveBack(key, dir string) {
	w.mu.Lock()
	defer w.mu.Unlock()
	if _, err := os.Stat(dir); err == nil {
		w.idle[key] = append(w.idle[key], dir)
	}
}

func (w *Workdirs) merge(ctx context.Context, dir string, s Spec) error {
	base := "refs/heads/" + s.BaseRef
	if _, err := w.run(ctx, dir, nil, "fetch", "--quiet", "origin", "+"+base+":refs/remotes/origin/"+s.BaseRef); err != nil {
		return fmt.Errorf("checkout fetch base %s: %w", s.BaseRef, err)
	}
	if _, err := w.run(ctx, dir, nil, "checkout", "--quiet", "--force", "--detach", "refs/remotes/origin/"+s.BaseRef); err != nil {
		return fmt.Errorf("checkout base %s: %w", s.BaseRef, err)
	}
	_, err := w.run(ctx, dir, nil, "-c", "user.name=Atoll", "-c", "user.email=atoll@localhost",
		"merge", "--quiet", "--no-ff", "--no-edit", s.HeadSHA)
	if err != nil {
		w.run(ctx, dir, nil, "merge", "--abort")
		return fmt.Errorf("merging %s onto %s failed (conflicts?): %w", short(s.HeadSHA), s.BaseRef, err)
	}
	return nil
}

// syncMirror makes sure the mirror has s.HeadSHA, fetching only when needed.
func (w *Workdirs) syncMirror(ctx context.Context, s Spec) (string, error) {
	lock := w.mirrorLock(s.Key)
	lock.Lock()
	defer lock.Unlock()
	mirror, err := w.initMirror(ctx, s.Key)
	if err != nil {
		return "", err
	}
	if w.hasCommit(ctx, mirror, s.HeadSHA) && (w.Strategy != StrategyMerge || s.BaseRef == "") {
		return mirror, nil
	}
	fetch := func(refspecs ...string) error {
		args := append([]string{"fetch", "--quiet", "--prune", s.Remote.URL}, refspecs...)
		_, err := w.run(ctx, mirror, s.Remote.Env, args...)
		return err
	}
	if err := fetch("+refs/heads/*:refs/heads/*"); err != nil {
		return "", fmt.Errorf("fetch %s: %w", s.Key, err)
	}
	// A fork's commits are only reachable through the host's pull ref.
	for _, r := range s.ExtraRefs {
		if w.hasCommit(ctx, mirror, s.HeadSHA) {
			break
		}
		if err := fetch("+" + r + ":" + r); err != nil {
			return "", fmt.Errorf("fetch %s %s: %w", s.Key, r, err)
		}
	}
	if !w.hasCommit(ctx, mirror, s.HeadSHA) {
		return "", fmt.Errorf("fetch %s: commit %s not found on the remote", s.Key, short(s.HeadSHA))
	}
	return mirror, nil
}

func (w *Workdirs) hasCommit(ctx context.Context, dir, sha string) bool {
	_, err := w.run(ctx, dir, nil, "cat-file", "-e", sha+"^{commit}")
	return err == nil
}

func short(sha string) string {
	if len(sha) > 8 {
		return sha[:8]
	}
	return sha
}

// validKey rejects keys that could escape Root.
func validKey(key string) bool {
	return key != "" && !strings.Contains(key, "..") && !strings.HasPrefix(key, "/")
}

func (w *Workdirs) run(ctx context.Context, dir string, env []string, args ...string) (string, error) {
	return run(ctx, w.Procs, dir, env, args...)
}

// ResolveBranch fetches the repository's branches into its mirror and
// returns the commit branch is at: what a drift check plans.
func (w *Workdirs) ResolveBranch(ctx context.Context, s Spec, branch string) (string, error) {
	if !validKey(s.Key) {
		return "", fmt.Errorf("resolve branch: invalid repository key")
	}
	ref := "refs/heads/" + branch
	if _, err := run(ctx, nil, "", nil, "check-ref-format", ref); err != nil || strings.HasPrefix(branch, "-") {
		return "", fmt.Errorf("resolve branch %q: not a branch name git accepts", branch)
	}
	lock := w.mirrorLock(s.Key)
	lock.Lock()
	defer lock.Unlock()
	mirror, err := w.initMirror(ctx, s.Key)
	if err != nil {
		return "", err
	}
	if _, err := w.run(ctx, mirror, s.Remote.Env, "fetch", "--quiet", "--prune", s.Remote.URL, "+refs/heads/*:refs/heads/*"); err != nil {
		return "", fmt.Errorf("fetch %s: %w", s.Key, err)
	}
	out, err := w.run(ctx, mirror, nil, "rev-parse", "--verify", "--quiet", ref+"^{commit}")
	if err != nil {
		return "", fmt.Errorf("resolve branch %q of %s: no such branch", branch, s.Key)
	}
	return strings.TrimSpace(out), nil
}

// DefaultBranch is the branch the remote's HEAD points at: a repository's
// default branch.
func (w *Workdirs) DefaultBranch(ctx context.Context, s Spec) (string, error) {
	out, err := run(ctx, w.Procs, "", s.Remote.Env, "ls-remote", "--symref", s.Remote.URL, "HEAD")
	if err != nil {
		return "", fmt.Errorf("default branch of %s: %w", s.Key, err)
	}
	for _, line := range strings.Split(out, "\n") {
		if ref, ok := strings.CutPrefix(line, "ref: refs/heads/"); ok {
			if branch, _, ok := strings.Cut(ref, "\tHEAD"); ok {
				return branch, nil
			}
		}
	}
	return "", fmt.Errorf("default branch of %s: the remote names none", s.Key)
}

// ShowFile is path's content at commit sha in the repository's mirror
// (fetched by ResolveBranch); fs.ErrNotExist when the commit has no such
// file.
func (w *Workdirs) ShowFile(ctx context.Context, s Spec, sha, path string) ([]byte, error) {
	if !validKey(s.Key) || strings.HasPrefix(path, "/") || strings.Contains(path, "..") || strings.HasPrefix(sha, "-") {
		return nil, fmt.Errorf("show file: invalid key, commit or path")
	}
	mirror := filepath.Join(w.Root, "mirrors", filepath.FromSlash(s.Key)+".git")
	if _, err := w.run(ctx, mirror, nil, "cat-file", "-e", sha+":"+path); err != nil {
		return nil, fs.ErrNotExist
	}
	out, err := w.run(ctx, mirror, nil, "cat-file", "blob", sha+":"+path)
	if err != nil {
		return nil, fmt.Errorf("show %s at %s: %w", path, short(sha), err)
	}
	return []byte(out), nil
}

// initMirror is the path of the repository's bare mirror, made empty if
// missing (its lock held).
func (w *Workdirs) initMirror(ctx context.Context, key string) (string, error) {
	mirror := filepath.Join(w.Root, "mirrors", filepath.FromSlash(key)+".git")
	if _, err := os.Stat(mirror); err == nil {
		return mirror, nil
	}
	if err := os.MkdirAll(mirror, 0o755); err != nil {
		return "", fmt.Errorf("mirror: %w", err)
	}
	if _, err := w.run(ctx, mirror, nil, "init", "--quiet", "--bare"); err != nil {
		return "", fmt.Errorf("mirror init: %w", err)
	}
	return mirror, nil
}
