package repocfg_test

import (
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/atollhq/atoll/runner/repocfg"
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
	t.Run("atlantis.yml", func(t *testing.T) {
		root := t.TempDir()
		write(t, root, "atlantis.yml", lines(`version: 2`))
		cfg, err := repocfg.Load(root)
		if err != nil || cfg == nil || cfg.Version != 2 {
			t.Errorf("Load = %+v, %v", cfg, err)
		}
	})
	t.Run("atlantis.yaml wins over atlantis.yml", func(t *testing.T) {
		root := t.TempDir()
		write(t, root, "atlantis.yaml", lines(`version: 3`))
		write(t, root, "atlantis.yml", lines(`version: 2`))
		cfg, err := repocfg.Load(root)
		if err != nil || cfg == nil || cfg.Version != 3 {
			t.Errorf("Load = %+v, %v", cfg, err)
		}
	})
	t.Run("errors name the file read", func(t *testing.T) {
		root := t.TempDir()
		write(t, root, "atlantis.yml", lines(`version: 3`, `projects: x`))
		_, err := repocfg.Load(root)
		wantInvalid(t, err, "atlantis.yml line 2: projects:")
	})
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
