package repocfg_test

import (
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/atollhq/atoll/repocfg"
)

func TestLoad(t *testing.T) {
	write := func(t *testing.T, root, name, content string) {
		t.Helper()
		if err := os.WriteFile(filepath.Join(root, name), []byte(content), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	t.Run("no file", func(t *testing.T) {
		cfg, err := repocfg.Load(t.TempDir())
		if cfg != nil || err != nil {
			t.Errorf("Load = %+v, %v; want nil, nil", cfg, err)
		}
	})
	t.Run("atlantis.yaml", func(t *testing.T) {
		root := t.TempDir()
		write(t, root, "atlantis.yaml", lines(`version: 3`, `projects:`, `- dir: a`))
		cfg, err := repocfg.Load(root)
		if err != nil || cfg == nil || !cfg.Explicit || len(cfg.Projects) != 1 {
			t.Errorf("Load = %+v, %v", cfg, err)
		}
	})
	// As in Atlantis, atlantis.yml is refused with a hint to rename it, also
	// beside an atlantis.yaml, rather than read or ignored.
	for _, files := range [][]string{{"atlantis.yml"}, {"atlantis.yml", "atlantis.yaml"}} {
		t.Run(strings.Join(files, " and "), func(t *testing.T) {
			root := t.TempDir()
			for _, f := range files {
				write(t, root, f, lines(`version: 3`, `projects:`, `- dir: a`))
			}
			cfg, err := repocfg.Load(root)
			if cfg != nil {
				t.Errorf("Load = %+v, want nil", cfg)
			}
			wantInvalid(t, err, `found "atlantis.yml" as config file; rename it using the .yaml extension (atlantis.yaml)`)
		})
	}
	t.Run("too large", func(t *testing.T) {
		root := t.TempDir()
		write(t, root, "atlantis.yaml", "version: 3\n"+strings.Repeat("# padding\n", 120000))
		_, err := repocfg.Load(root)
		wantInvalid(t, err, "atlantis.yaml is larger than")
	})
	t.Run("directory", func(t *testing.T) {
		root := t.TempDir()
		if err := os.Mkdir(filepath.Join(root, "atlantis.yaml"), 0o755); err != nil {
			t.Fatal(err)
		}
		_, err := repocfg.Load(root)
		wantInvalid(t, err, "atlantis.yaml is a directory")
	})
}

func TestLoadExpandsDirGlobs(t *testing.T) {
	root := writeRepo(t,
		"envs/prod/main.tf", "envs/dev/main.tf.json", "envs/tofu/main.tofu", "envs/tg/terragrunt.hcl",
		"envs/docs/README.md", "envs/file.tf", "envs/deep/x/main.tf", "other/main.tf")
	if err := os.WriteFile(filepath.Join(root, "atlantis.yaml"), []byte(lines(
		`version: 3`,
		`projects:`,
		`- dir: envs/*`,
		`  workspace: staging`,
		`  apply_requirements: [approved]`,
		`- dir: nothing/*`,
		`- name: other`,
		`  dir: other`,
	)), 0o644); err != nil {
		t.Fatal(err)
	}
	outside := writeRepo(t, "main.tf")
	if err := os.Symlink(outside, filepath.Join(root, "envs", "link")); err != nil {
		t.Fatal(err)
	}
	cfg, err := repocfg.Load(root)
	if err != nil {
		t.Fatal(err)
	}
	// A symbolic link, a directory without Terraform files, a file, a deeper directory and a
	// pattern matching nothing yield no project; Atlantis's order is path order.
	if got, want := labels(cfg.Projects), []string{"envs/dev:staging", "envs/prod:staging", "envs/tg:staging", "envs/tofu:staging", "other=other:default"}; strings.Join(got, " ") != strings.Join(want, " ") {
		t.Errorf("projects = %v, want %v", got, want)
	}
	if r := cfg.Projects[0].ApplyRequirements; len(r) != 1 || r[0] != "approved" {
		t.Errorf("expanded project lost its settings: %+v", cfg.Projects[0])
	}
	if len(cfg.Warnings) != 0 {
		t.Errorf("warnings = %q", cfg.Warnings)
	}
	// Parse has no checkout: it keeps the pattern.
	parsed := mustParse(t, lines(`version: 3`, `projects:`, `- dir: envs/*`))
	if parsed.Projects[0].Dir != "envs/*" {
		t.Errorf("Parse dir = %q", parsed.Projects[0].Dir)
	}
}

func TestLoadDirGlobDuplicates(t *testing.T) {
	root := writeRepo(t, "envs/prod/main.tf", "envs/dev/main.tf")
	if err := os.WriteFile(filepath.Join(root, "atlantis.yaml"), []byte(lines(
		`version: 3`,
		`projects:`,
		`- dir: envs/prod`,
		`- dir: envs/*`,
	)), 0o644); err != nil {
		t.Fatal(err)
	}
	_, err := repocfg.Load(root)
	wantInvalid(t, err, `atlantis.yaml line 3: projects[0]: 2 projects have dir "envs/prod" and workspace "default", so each must have a name`)
}

// A named entry with a glob dir expands as Atlantis's ParseRepoCfg expands
// it: one project per matching directory, none with the name (which the
// warnings say), each with the entry's other settings.
func TestLoadDirGlobDropsName(t *testing.T) {
	root := writeRepo(t, "stacks/blue/main.tf", "stacks/green/main.tf")
	if err := os.WriteFile(filepath.Join(root, "atlantis.yaml"), []byte(lines(
		`version: 3`,
		`projects:`,
		`- name: stack`,
		`  dir: stacks/*`,
		`  workspace: edge`,
	)), 0o644); err != nil {
		t.Fatal(err)
	}
	cfg, err := repocfg.Load(root)
	if err != nil {
		t.Fatal(err)
	}
	if got, want := strings.Join(labels(cfg.Projects), " "), "stacks/blue:edge stacks/green:edge"; got != want {
		t.Errorf("projects = %s, want %s", got, want)
	}
	if len(cfg.Warnings) != 1 || !strings.Contains(cfg.Warnings[0], "atlantis.yaml line 3: `projects[0].name`") {
		t.Errorf("warnings = %q", cfg.Warnings)
	}
	// Without a checkout the entry stays one pattern, also without the name.
	parsed := mustParse(t, lines(`version: 3`, `projects:`, `- name: stack`, `  dir: stacks/*`))
	if p := parsed.Projects[0]; p.Name != "" || p.Dir != "stacks/*" {
		t.Errorf("Parse project = %+v", p)
	}
}
