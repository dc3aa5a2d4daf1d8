package repocfg_test

import (
	"os"
	"path/filepath"
	"reflect"
	"testing"

	"github.com/atollhq/atoll/repocfg"
)

// A -d glob pattern selects configured projects whose dir it matches, or,
// with autodiscovery, the checkout's Terraform directories it matches;
// never anything outside the checkout.
func TestFindDirPattern(t *testing.T) {
	repo := writeRepo(t,
		"main.tf",
		"envs/prod/main.tf",
		"envs/staging/main.tf",
		"envs/notes/README.md",
		"modules/vpc/main.tf",
		"ignored/x/main.tf",
	)
	outside := writeRepo(t, "secret/main.tf")
	if err := os.Symlink(filepath.Join(outside, "secret"), filepath.Join(repo, "envs", "link")); err != nil {
		t.Fatal(err)
	}
	configured := mustParse(t, lines(`version: 3`, `projects:`,
		`- {name: prod, dir: envs/prod}`, `- {name: staging, dir: envs/staging}`, `- {name: staging-blue, dir: envs/staging, workspace: blue}`,
		`- {name: gone, dir: envs/deleted}`, `- {name: vpc, dir: modules/vpc}`))
	discovering := mustParse(t, lines(`version: 3`, `autodiscover:`, `  ignore_paths: ["ignored/**"]`))
	tests := []struct {
		name string
		cfg  *repocfg.Config
		d, w string
		want []string // labels; nil: an error
	}{
		{"configured, one level", configured, "envs/*", "", []string{"prod=envs/prod:default", "staging=envs/staging:default"}},
		{"configured, workspace", configured, "envs/*", "blue", []string{"staging-blue=envs/staging:blue"}},
		{"configured, doublestar", configured, "**", "", []string{"prod=envs/prod:default", "staging=envs/staging:default", "vpc=modules/vpc:default"}},
		{"configured, question mark", configured, "envs/pro?", "", []string{"prod=envs/prod:default"}},
		{"configured, nothing matches", configured, "nope/*", "", nil},
		{"discovered dirs with Terraform files, not through a link", discovering, "envs/*", "", []string{"envs/prod:default", "envs/staging:default"}},
		{"discovered, ignore_paths", discovering, "*/*", "", []string{"envs/prod:default", "envs/staging:default", "modules/vpc:default"}},
		{"no config discovers", nil, "envs/st*", "", []string{"envs/staging:default"}},
		{"dot dot refused", nil, "../*", "", nil},
		{"absolute refused", nil, "/envs/*", "", nil},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got, err := repocfg.Find(tt.cfg, repo, "", tt.d, tt.w)
			if tt.want == nil {
				if err == nil {
					t.Fatalf("Find -d %s = %q, want an error", tt.d, labels(got))
				}
				return
			}
			if err != nil {
				t.Fatal(err)
			}
			if !reflect.DeepEqual(labels(got), tt.want) {
				t.Errorf("Find -d %s = %q, want %q", tt.d, labels(got), tt.want)
			}
		})
	}
}
