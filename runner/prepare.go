package runner

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"strings"

	"github.com/atollhq/atoll"
	"github.com/atollhq/atoll/terraform"
	"github.com/atollhq/atoll/tfinstall"
)

// initProject runs init in dir (see init) and selects the job's workspace.
func (r *Runner) initProject(ctx context.Context, w *work, j *atoll.Job, tf terraform.Runner, dir string, args []string, sink *logSink) error {
	if err := r.init(ctx, w, j, tf, dir, args, sink); err != nil {
		return err
	}
	// Pooled checkouts may have another workspace selected: always select.
	return tf.SelectWorkspace(ctx, dir, j.Workspace, sink.emit)
}

// checkoutProject checks out the job's commit in its workspace's work dir
// and returns the project directory.
func (r *Runner) checkoutProject(ctx context.Context, w *work, j *atoll.Job, sink *logSink) (string, error) {
	if b, err := r.selectTerraform(ctx, w, j); err != nil {
		return "", err
	} else if b.Version != nil {
		sink.Write(atoll.StreamAtoll, fmt.Sprintf("Using %s %s (%s)", tfinstall.Command(r.distribution(j)), b.Version, filepath.Base(b.Path)))
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
	// A symbolic link committed to the repository could lead Terraform,
	// and the .terraform directory it writes, anywhere on the server.
	if ok, err := inside(root, dir); err != nil || !ok {
		return "", atoll.Errorf(atoll.EINVALID, "Directory %q leads outside the repository through a symbolic link.", j.Dir)
	}
	return dir, nil
}
