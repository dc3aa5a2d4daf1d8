package worker

import (
	"cmp"
	"context"
	"fmt"
	"log/slog"
	"path"
	"path/filepath"
	"sync"

	"github.com/hashicorp/go-version"

	"github.com/atollhq/atoll"
	"github.com/atollhq/atoll/git"
	"github.com/atollhq/atoll/runner"
	"github.com/atollhq/atoll/runner/executor"
	"github.com/atollhq/atoll/terraform"
	"github.com/atollhq/atoll/tfinstall"
)

// terraformSet is the worker's Terraform: its --terraform-bin, whose
// version is read once, and the versions installed in DATA_DIR/bin for
// jobs that ask for another.
type terraformSet struct {
	runner    terraform.Runner // --terraform-bin and what every run adds to its environment
	installer *tfinstall.Installer

	mu      sync.Mutex
	version *version.Version
}

// defaultVersion is the version of --terraform-bin; only a success is
// cached, so that a binary fixed meanwhile is picked up.
func (t *terraformSet) defaultVersion(ctx context.Context) (*version.Version, error) {
	t.mu.Lock()
	defer t.mu.Unlock()
	if t.version != nil {
		return t.version, nil
	}
	s, err := t.runner.Version(ctx)
	if err != nil {
		return nil, err
	}
	v, err := version.NewVersion(s)
	if err != nil {
		return nil, fmt.Errorf("terraform version %q: %w", s, err)
	}
	t.version = v
	return v, nil
}

// defaultDistribution is what --terraform-bin is, told by its name.
func (t *terraformSet) defaultDistribution() string {
	if filepath.Base(t.runner.Bin) == "tofu" {
		return tfinstall.OpenTofu
	}
	return tfinstall.Terraform
}

// binary is the binary a job of spec runs: --terraform-bin unless the
// spec names another version (or distribution) than it is, then that
// version installed here. The server's own path (spec.Bin) means nothing
// on this machine.
func (t *terraformSet) binary(ctx context.Context, spec executor.Terraform) (string, error) {
	dist := cmp.Or(spec.Distribution, tfinstall.Terraform)
	if spec.Version == "" {
		return t.runner.Bin, nil
	}
	want, err := version.NewVersion(spec.Version)
	if err != nil {
		return "", atoll.Errorf(atoll.EINVALID, "The job asks for Terraform version %q, which is not a version.", spec.Version)
	}
	if dist == t.defaultDistribution() {
		if have, err := t.defaultVersion(ctx); err == nil && have.Equal(want) {
			return t.runner.Bin, nil
		}
	}
	b, err := t.installer.Ensure(ctx, dist, want)
	if err != nil {
		return "", atoll.Errorf(atoll.EINVALID, "This job needs %s %s, which this worker cannot install: %s.", tfinstall.Command(dist), want, err)
	}
	return b.Path, nil
}

// path is what goes before PATH in run steps, as the server's
// Runner.terraformPath: the directory of --terraform-bin when it is named
// terraform (or tofu), else a directory holding only the job's binary
// under its plain name, then the directory of installed versions.
func (t *terraformSet) path(dist, bin string) []string {
	if bin == "" || bin == t.runner.Bin {
		if base := filepath.Base(t.runner.Bin); base != "terraform" && base != "tofu" {
			return nil
		}
		abs, err := filepath.Abs(t.runner.Bin)
		if err != nil {
			return nil
		}
		return []string{filepath.Dir(abs)}
	}
	dir, err := t.installer.PathDir(cmp.Or(dist, tfinstall.Terraform), tfinstall.Binary{Path: bin})
	if err != nil {
		return []string{t.installer.Dir}
	}
	return []string{dir, t.installer.Dir}
}

// newExecutor is the executor of one job: the server's own in-process
// executor over this machine's Terraform and checkouts. Policies are nil:
// the control plane checks the uploaded `show -json` itself.
func (t *terraformSet) newExecutor(checkouts runner.Checkouts, log *slog.Logger) *runner.LocalExecutor {
	return &runner.LocalExecutor{Terraform: t.runner, Checkouts: checkouts, Version: t.defaultVersion, Path: t.path, Logger: log}
}

// jobCheckouts serves one job its checkouts from the worker's work dirs,
// fetched from the control plane with the job's token, and gives them
// back when the job ends.
type jobCheckouts struct {
	workdirs *git.Workdirs
	client   *Client
	jobID    int64
	jobToken string

	mu       sync.Mutex
	releases []func()
}

// Checkout implements runner.Checkouts. A fetch that fails is tried once
// against each other server: the one it went to may have stopped being
// the active node.
func (c *jobCheckouts) Checkout(ctx context.Context, co executor.Checkout) (string, error) {
	var err error
	for range len(c.client.Servers) {
		var root string
		if root, err = c.checkout(ctx, co); err == nil || ctx.Err() != nil {
			return root, err
		}
		c.client.rotate(c.client.server())
	}
	return "", err
}

func (c *jobCheckouts) checkout(ctx context.Context, co executor.Checkout) (string, error) {
	// The job token reaches git as a header in its environment only.
	remote, err := git.NewRemoteAuthorization(c.client.GitURL(c.jobID), "Bearer "+c.jobToken)
	if err != nil {
		return "", err
	}
	root, release, err := c.workdirs.Checkout(ctx, git.Spec{
		Key: path.Join(co.Host, co.Owner, co.Name), Remote: remote, Pull: co.Pull, Workspace: co.Workspace,
		HeadSHA: co.HeadSHA, HeadRef: co.HeadRef, BaseRef: co.MergeBase, ExtraRefs: co.ExtraRefs,
	})
	if err != nil {
		return "", err
	}
	c.mu.Lock()
	c.releases = append(c.releases, release)
	c.mu.Unlock()
	return root, nil
}

// release gives back every checkout the job leased.
func (c *jobCheckouts) release() {
	c.mu.Lock()
	defer c.mu.Unlock()
	for _, r := range c.releases {
		r()
	}
	c.releases = nil
}
