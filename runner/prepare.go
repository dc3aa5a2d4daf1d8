package runner

import (
	"context"
	"crypto/sha256"
	"encoding/hex"
	"fmt"
	"os"
	"path/filepath"
	"sort"
	"strings"
	"time"

	"github.com/atollhq/atoll"
)

// prepare checks out the job's commit in its workspace's work dir, runs
// terraform init when the project's configuration changed since the last
// init there, and selects the workspace. It returns the project directory.
func (r *Runner) prepare(ctx context.Context, w *work, j *atoll.Job, sink *logSink) (string, error) {
	if err := r.checkTerraformVersion(ctx, j.Spec.TerraformVersion); err != nil {
		return "", err
	}
	sink.Write(atoll.StreamAtoll, fmt.Sprintf("Checking out %s at %s (workspace %s)", j.Repo, short(j.HeadSHA), j.Workspace))
	root, err := r.checkout(ctx, w, j.Workspace, j.HeadSHA)
	if err != nil {
		return "", err
	}
	dir := filepath.Join(root, filepath.FromSlash(j.Dir))
	if rel, err := filepath.Rel(root, dir); err != nil || strings.HasPrefix(rel, "..") {
		return "", atoll.Errorf(atoll.EINVALID, "Directory %q is outside the repository.", j.Dir)
	}
	if st, err := os.Stat(dir); err != nil || !st.IsDir() {
		return "", atoll.Errorf(atoll.EINVALID, "Directory %q does not exist at %s.", j.Dir, short(j.HeadSHA))
	}
	fp, err := initFingerprint(dir)
	if err != nil {
		return "", err
	}
	marker := filepath.Join(dir, ".terraform", "atoll-init")
	if prev, err := os.ReadFile(marker); err == nil && string(prev) == fp {
		sink.Write(atoll.StreamAtoll, "Configuration unchanged since the last init here: skipping terraform init.")
	} else {
		sink.Write(atoll.StreamAtoll, "$ terraform init -input=false"+argsSuffix(j.Spec.InitArgs))
		start := time.Now()
		defer func() { w.log.Debug("terraform init", "job", j.ID, "ms", time.Since(start).Milliseconds()) }()
		if err := r.terraformFor(j).Init(ctx, dir, j.Spec.InitArgs, sink.emit); err != nil {
			return "", err
		}
		if err := os.MkdirAll(filepath.Dir(marker), 0o755); err != nil {
			return "", fmt.Errorf("init marker: %w", err)
		}
		if err := os.WriteFile(marker, []byte(fp), 0o644); err != nil {
			return "", fmt.Errorf("init marker: %w", err)
		}
	}
	// Pooled checkouts may have another workspace selected: always select.
	if err := r.terraformFor(j).SelectWorkspace(ctx, dir, j.Workspace, sink.emit); err != nil {
		return "", err
	}
	return dir, nil
}

// initFingerprint hashes what terraform init depends on in a project dir: its
// .tf/.tf.json files (backend, providers, module blocks) and the lock file.
// Local module contents are read at plan time and need no re-init.
func initFingerprint(dir string) (string, error) {
	entries, err := os.ReadDir(dir)
	if err != nil {
		return "", fmt.Errorf("init fingerprint: %w", err)
	}
	var names []string
	for _, e := range entries {
		n := e.Name()
		if !e.IsDir() && (strings.HasSuffix(n, ".tf") || strings.HasSuffix(n, ".tf.json") || n == ".terraform.lock.hcl") {
			names = append(names, n)
		}
	}
	sort.Strings(names)
	h := sha256.New()
	for _, n := range names {
		b, err := os.ReadFile(filepath.Join(dir, n))
		if err != nil {
			return "", fmt.Errorf("init fingerprint: %w", err)
		}
		fmt.Fprintf(h, "%s\x00%d\x00", n, len(b))
		h.Write(b)
	}
	return hex.EncodeToString(h.Sum(nil)), nil
}
