// Package demo seeds what `atoll server --demo` shows: a local git repository
// with two Terraform projects that need no provider download, and an open
// pull request that changes one of them and autoplans.
package demo

import (
	"context"
	"fmt"
	"os"
	"path/filepath"

	"github.com/atollhq/atoll"
	"github.com/atollhq/atoll/git"
	"github.com/atollhq/atoll/store"
)

// PlanApproval is --plan-approval in demo mode: production's plans are
// approved in the dashboard before they are applied (and, the repository
// being local, that approval is also the pull request's review, which
// production's apply_requirements [approved] asks for).
const PlanApproval = "demo/infra/production"

// Repo is the demo repository's identity.
var Repo = atoll.Repo{VCS: atoll.VCSLocal, Host: "local", Owner: "demo", Name: "infra"}

// AzureRepo is the demo repository named as Azure DevOps names one
// (ORG/PROJECT/REPO, on dev.azure.com), still a local repository: it shows
// how an Azure pull request looks without an Azure organisation.
var AzureRepo = atoll.Repo{VCS: atoll.VCSLocal, Host: "dev.azure.com", Owner: "demo-org/demo-project", Name: "infra"}

// Options choose how the demo is seeded. The zero value is the default demo.
type Options struct {
	// VCS names the demo repository as that host would: "" (or
	// atoll.VCSLocal) for demo/infra, atoll.VCSAzureDevOps for
	// demo-org/demo-project/infra. The repository is local either way.
	VCS string
}

// Check refuses a VCS the demo cannot imitate.
func (o Options) Check() error {
	switch o.VCS {
	case "", atoll.VCSLocal, atoll.VCSAzureDevOps:
		return nil
	}
	return atoll.Errorf(atoll.EINVALID, "The demo names its repository as %q or %q would, not %q.", atoll.VCSLocal, atoll.VCSAzureDevOps, o.VCS)
}

// Repo is the demo repository's identity.
func (o Options) Repo() atoll.Repo {
	if o.VCS == atoll.VCSAzureDevOps {
		return AzureRepo
	}
	return Repo
}

// PlanApproval is --plan-approval in demo mode (see the constant): the
// production project of the demo repository.
func (o Options) PlanApproval() string { return o.Repo().FullName() + "/production" }

// Allowlist is --repo-allowlist in demo mode: the demo repository's owner.
func (o Options) Allowlist() string {
	r := o.Repo()
	return r.Host + "/" + r.Owner + "/*"
}

const atlantisYAML = `version: 3
automerge: false
parallel_plan: true
projects:
  - name: staging
    dir: staging
    autoplan:
      when_modified: ["*.tf", "../modules/**/*.tf"]
  - name: production
    dir: production
    apply_requirements: [approved]
    autoplan:
      when_modified: ["*.tf", "../modules/**/*.tf"]
`

func projectTF(env string, instances int, stateDir string) string {
	return fmt.Sprintf(`# The %[1]s environment. terraform_data is built into Terraform,
# so this plans and applies without downloading a provider.
terraform {
  # State lives beside Atoll's database, not in a disposable checkout, so
  # that every pull request plans against what was applied.
  backend "local" {
    path = %[4]q
  }
}

resource "terraform_data" "network" {
  input = {
    env  = %[1]q
    cidr = "10.%[2]d.0.0/16"
  }
}

resource "terraform_data" "app" {
  count = %[3]d
  input = "%[1]s-app-${count.index}"
  triggers_replace = [terraform_data.network.id]
}

output "app_names" {
  value = terraform_data.app[*].output
}
`, env, map[string]int{"staging": 1, "production": 2}[env], instances, filepath.Join(stateDir, env+".tfstate"))
}

// Seed creates the repository under dataDir/demo and records pull request
// #1 (linked under publicURL) with an autoplan request, unless that was done
// before. It returns the repository record.
func Seed(ctx context.Context, db *store.DB, dataDir, publicURL string) (*atoll.Repo, error) {
	return SeedWith(ctx, db, dataDir, publicURL, Options{})
}

// SeedWith is Seed with the repository named as opt says.
func SeedWith(ctx context.Context, db *store.DB, dataDir, publicURL string, opt Options) (*atoll.Repo, error) {
	if err := opt.Check(); err != nil {
		return nil, err
	}
	repo := opt.Repo()
	// Each naming has its own repository (and state): a data dir seeded
	// both ways keeps both.
	sub, state := "infra", "state"
	if opt.VCS == atoll.VCSAzureDevOps {
		sub, state = "azure-infra", "azure-state"
	}
	dir, err := filepath.Abs(filepath.Join(dataDir, "demo", sub))
	if err != nil {
		return nil, err
	}
	repo.CloneURL = "file://" + dir
	if existing, err := db.RepoByName(ctx, repo.FullName()); err == nil {
		return existing, nil
	}
	head, base, err := createRepo(ctx, dir, filepath.Join(filepath.Dir(dir), state))
	if err != nil {
		return nil, fmt.Errorf("demo repo: %w", err)
	}
	err = db.Update(ctx, func(tx *store.Tx) error {
		repoID, err := tx.UpsertRepo(repo)
		if err != nil {
			return err
		}
		repo.ID = repoID
		pullID, err := tx.UpsertPull(repoID, atoll.Pull{Number: 1, Title: "Scale staging to three app instances",
			Author: "alice", HeadSHA: head, HeadRef: "scale-staging", BaseSHA: base, BaseRef: "main", State: atoll.PullOpen,
			URL: atoll.Links{Base: publicURL}.Pull(repo.FullName(), 1)})
		if err != nil {
			return err
		}
		if _, err := tx.AddComment(pullID, "alice", "Staging needs more capacity for the load test. Atoll plans this automatically."); err != nil {
			return err
		}
		if err := tx.InsertRequest(&atoll.Request{PullID: pullID, Kind: atoll.RequestAutoplan, User: "alice", HeadSHA: head}); err != nil {
			return err
		}
		return tx.AddEvent(atoll.Event{Actor: "demo", Action: "demo.seed", Repo: repo.FullName(), Pull: 1, Detail: "seeded " + dir})
	})
	if err != nil {
		return nil, err
	}
	return &repo, nil
}

// createRepo writes the repository with a main branch and a scale-staging
// branch, and returns the head and base commits.
func createRepo(ctx context.Context, dir, stateDir string) (head, base string, err error) {
	if err := os.RemoveAll(dir); err != nil {
		return "", "", err
	}
	env := []string{"GIT_AUTHOR_NAME=Alice", "GIT_AUTHOR_EMAIL=alice@example.com", "GIT_COMMITTER_NAME=Alice", "GIT_COMMITTER_EMAIL=alice@example.com"}
	run := func(args ...string) (string, error) { return git.Run(ctx, dir, env, args...) }
	files := map[string]string{
		"atlantis.yaml":        atlantisYAML,
		"staging/main.tf":      projectTF("staging", 1, stateDir),
		"production/main.tf":   projectTF("production", 2, stateDir),
		"README.md":            "# demo/infra\n\nSample infrastructure for the Atoll demo.\n",
		".gitignore":           ".terraform/\n*.tfplan\nterraform.tfstate*\n",
		"modules/tags/main.tf": "variable \"env\" {\n  type = string\n}\n\noutput \"tags\" {\n  value = { env = var.env }\n}\n",
	}
	if err := writeFiles(dir, files); err != nil {
		return "", "", err
	}
	steps := [][]string{{"init", "--quiet", "--initial-branch=main"}, {"add", "-A"}, {"commit", "--quiet", "-m", "Staging and production"}}
	for _, s := range steps {
		if _, err := run(s...); err != nil {
			return "", "", err
		}
	}
	if base, err = run("rev-parse", "HEAD"); err != nil {
		return "", "", err
	}
	if _, err := run("checkout", "--quiet", "-b", "scale-staging"); err != nil {
		return "", "", err
	}
	if err := writeFiles(dir, map[string]string{"staging/main.tf": projectTF("staging", 3, stateDir)}); err != nil {
		return "", "", err
	}
	if _, err := run("commit", "--quiet", "-am", "Scale staging to three app instances"); err != nil {
		return "", "", err
	}
	if head, err = run("rev-parse", "HEAD"); err != nil {
		return "", "", err
	}
	_, err = run("checkout", "--quiet", "main")
	return head, base, err
}

func writeFiles(root string, files map[string]string) error {
	for name, body := range files {
		p := filepath.Join(root, filepath.FromSlash(name))
		if err := os.MkdirAll(filepath.Dir(p), 0o755); err != nil {
			return err
		}
		if err := os.WriteFile(p, []byte(body), 0o644); err != nil {
			return err
		}
	}
	return nil
}
