package repocfg_test

import (
	"reflect"
	"testing"

	"github.com/atollhq/atoll/repocfg"
)

// atlantisFileList is Atlantis's default --autoplan-file-list.
const atlantisFileList = "**/*.tf,**/*.tf.json,**/*.tfvars,**/*.tfvars.json,**/*.tofu,**/*.tofu.json,**/terragrunt.hcl,**/.terraform.lock.hcl"

func TestSelectAutoplanFileList(t *testing.T) {
	tests := []struct {
		name     string
		fileList string // "" is the built-in rule
		files    []string
		changed  []string
		want     []string
	}{
		{"built-in ignores hcl", "", []string{"app/main.tf", "app/x.hcl"}, []string{"app/x.hcl"}, nil},
		{"built-in ignores terragrunt.hcl", "", []string{"app/main.tf", "app/terragrunt.hcl"}, []string{"app/terragrunt.hcl"}, nil},
		{"built-in ignores lock file", "", []string{"app/main.tf"}, []string{"app/.terraform.lock.hcl"}, nil},
		{"custom hcl pattern", "**/*.hcl", []string{"app/main.tf", "app/x.hcl"}, []string{"app/x.hcl"}, []string{"app:default"}},
		{"custom pattern drops tf", "**/*.hcl", []string{"app/main.tf"}, []string{"app/main.tf"}, nil},
		{"custom pattern matches root file", "**/*.hcl", []string{"main.tf", "x.hcl"}, []string{"x.hcl"}, []string{".:default"}},
		{"path-anchored pattern", "app/**/*.yaml", []string{"app/main.tf", "other/main.tf"}, []string{"app/c.yaml", "other/c.yaml"}, []string{"app:default"}},
		{"dir still needs terraform", "**/*.hcl", []string{"app/x.hcl"}, []string{"app/x.hcl"}, nil},
		{"modules rule still applies", "**/*.hcl", []string{"app/main.tf", "app/modules/m/x.hcl"}, []string{"app/modules/m/x.hcl"}, []string{"app:default"}},
		{"atlantis default takes terragrunt.hcl", atlantisFileList, []string{"app/main.tf", "app/terragrunt.hcl"}, []string{"app/terragrunt.hcl"}, []string{"app:default"}},
		{"atlantis default takes lock file", atlantisFileList, []string{"app/main.tf"}, []string{"app/.terraform.lock.hcl"}, []string{"app:default"}},
		{"atlantis default ignores README", atlantisFileList, []string{"app/main.tf"}, []string{"app/README.md"}, nil},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			repo := writeRepo(t, tt.files...)
			list, err := repocfg.ParseAutoplanFileList(tt.fileList)
			if err != nil {
				t.Fatalf("ParseAutoplanFileList: %v", err)
			}
			sc := repocfg.DefaultServerConfig()
			sc.AutoplanFileList = list
			cfg, err := sc.Load(repo, "github.com/o/r", "main")
			if err != nil {
				t.Fatalf("Load: %v", err)
			}
			got, err := repocfg.Select(cfg, repo, tt.changed)
			if err != nil {
				t.Fatalf("Select: %v", err)
			}
			if g := labels(got); !reflect.DeepEqual(g, append([]string{}, tt.want...)) {
				t.Errorf("Select: got %v, want %v", g, tt.want)
			}
			// Affected (the undiverged requirement) discovers the same way.
			for _, want := range tt.want {
				dir := want[:len(want)-len(":default")]
				ok, err := repocfg.Affected(cfg, repo, "", dir, "default", tt.changed)
				if err != nil || !ok {
					t.Errorf("Affected(%s) = %v, %v; want true", dir, ok, err)
				}
			}
		})
	}
}

func TestParseAutoplanFileList(t *testing.T) {
	tests := []struct {
		in      string
		want    []string
		wantErr string
	}{
		{"", nil, ""},
		{"  ", nil, ""},
		{"**/*.tf", []string{"**/*.tf"}, ""},
		{" **/*.tf , **/*.hcl ,", []string{"**/*.tf", "**/*.hcl"}, ""},
		{",", nil, "no patterns"},
		{"**/*.tf,!**/x.tf", nil, "not supported"},
		{"[a", nil, "invalid pattern"},
	}
	for _, tt := range tests {
		t.Run(tt.in, func(t *testing.T) {
			got, err := repocfg.ParseAutoplanFileList(tt.in)
			if tt.wantErr != "" {
				wantInvalid(t, err, tt.wantErr)
				return
			}
			if err != nil {
				t.Fatalf("ParseAutoplanFileList(%q): %v", tt.in, err)
			}
			if !reflect.DeepEqual(got, tt.want) {
				t.Errorf("got %q, want %q", got, tt.want)
			}
		})
	}
}
