package repocfg_test

import (
	"reflect"
	"testing"

	"github.com/atollhq/atoll/repocfg"
)

func TestFind(t *testing.T) {
	repo := writeRepo(t,
		"main.tf",
		"project1/main.tf",
		"project2/main.tf",
		"adhoc/main.tf",
		"file.txt",
	)
	cfg := mustParse(t, lines(
		`version: 3`,
		`projects:`,
		`- name: one`,
		`  dir: project1`,
		`  terraform_version: 1.5.7`,
		`- name: two-staging`,
		`  dir: project2`,
		`  workspace: staging`,
		`- name: two-prod`,
		`  dir: project2`,
		`  workspace: prod`,
		`- name: backend-a`,
		`  dir: project2`,
		`- name: backend-b`,
		`  dir: project2`,
		`- name: gone`,
		`  dir: deleted`,
	))
	tests := []struct {
		name            string
		cfg             *repocfg.Config
		p, d, w         string
		want            []string
		wantErr         []string
		wantTFVersion   string
		wantDefaultAuto bool
	}{
		{name: "by name", cfg: cfg, p: "one", want: []string{"one=project1:default"}, wantTFVersion: "1.5.7"},
		{name: "by name ignores dir and workspace", cfg: cfg, p: "two-prod", d: "project1", w: "x", want: []string{"two-prod=project2:prod"}},
		{name: "unknown name", cfg: cfg, p: "three", wantErr: []string{`no project named "three" in atlantis.yaml`}},
		{name: "name without config", cfg: nil, p: "one", wantErr: []string{`cannot select project "one" by name`}},
		{name: "name with config without projects", cfg: mustParse(t, lines(`version: 3`)), p: "one", wantErr: []string{`cannot select project "one" by name`}},
		{name: "name whose dir is missing", cfg: cfg, p: "gone", wantErr: []string{"directory deleted does not exist"}},
		{name: "dir and workspace", cfg: cfg, d: "project2", w: "staging", want: []string{"two-staging=project2:staging"}},
		{name: "dir selects all projects of the workspace", cfg: cfg, d: "project2", want: []string{"backend-a=project2:default", "backend-b=project2:default"}},
		{name: "dir is cleaned", cfg: cfg, d: "./project1/", want: []string{"one=project1:default"}},
		{name: "configured dir, other workspace is ad hoc", cfg: cfg, d: "project1", w: "dev", want: []string{"project1:dev"}, wantDefaultAuto: true},
		{name: "unconfigured dir is ad hoc", cfg: cfg, d: "adhoc", want: []string{"adhoc:default"}, wantDefaultAuto: true},
		{name: "root by default with config", cfg: cfg, want: []string{".:default"}, wantDefaultAuto: true},
		{name: "missing dir with config", cfg: cfg, d: "nope", wantErr: []string{"directory nope does not exist"}},
		{name: "no config dir", cfg: nil, d: "project1", w: "staging", want: []string{"project1:staging"}, wantDefaultAuto: true},
		{name: "no config root by default", cfg: nil, want: []string{".:default"}, wantDefaultAuto: true},
		{name: "no config explicit root", cfg: nil, d: ".", w: "default", want: []string{".:default"}},
		{name: "no config missing dir", cfg: nil, d: "nope", wantErr: []string{"directory nope does not exist"}},
		{name: "dir that is a file", cfg: nil, d: "file.txt", wantErr: []string{"directory file.txt does not exist"}},
		{name: "dotdot dir", cfg: nil, d: "../x", wantErr: []string{"invalid directory: must not contain .."}},
		{name: "absolute dir", cfg: cfg, d: "/etc", wantErr: []string{"invalid directory:", "must be relative"}},
		{name: "invalid workspace", cfg: nil, d: "project1", w: "a;b", wantErr: []string{"invalid workspace:", `"a;b"`}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got, err := repocfg.Find(tt.cfg, repo, tt.p, tt.d, tt.w)
			if tt.wantErr != nil {
				if err == nil {
					t.Fatalf("Find = %v, want error", labels(got))
				}
				wantInvalid(t, err, tt.wantErr...)
				return
			}
			if err != nil {
				t.Fatalf("Find: %v", err)
			}
			if g := labels(got); !reflect.DeepEqual(g, tt.want) {
				t.Errorf("got %v, want %v", g, tt.want)
			}
			if tt.wantTFVersion != "" && got[0].TerraformVersion != tt.wantTFVersion {
				t.Errorf("terraform version = %q, want %q", got[0].TerraformVersion, tt.wantTFVersion)
			}
			if tt.wantDefaultAuto && !reflect.DeepEqual(got[0].Autoplan, defaultAutoplan) {
				t.Errorf("autoplan = %+v, want defaults", got[0].Autoplan)
			}
		})
	}
}
