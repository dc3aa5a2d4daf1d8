package runner

import (
	"regexp"
	"strings"
	"testing"

	"github.com/atollhq/atoll/command"
	"github.com/atollhq/atoll/repocfg"
)

// --restrict-file-list, as Atlantis: -d needs a file modified directly in
// the directory; -p needs every modified file directly in a named
// project's directory; a -p regexp keeps the projects with modified files.
func TestRestrictToModified(t *testing.T) {
	projects := []repocfg.Project{{Name: "dev-a", Dir: "dev/a"}, {Name: "dev-b", Dir: "dev/b"}}
	files := []string{"dev/a/main.tf", "dev/a/vars.tf"}
	re := regexp.MustCompile("^(?:dev-.*)$")
	for _, tc := range []struct {
		name     string
		cmd      command.Command
		projects []repocfg.Project
		files    []string
		want     string
		wantErr  string
	}{
		{"dir modified", command.Command{Dir: "dev/a"}, projects[:1], files, "dev-a", ""},
		{"dir not modified", command.Command{Dir: "dev/b"}, projects[1:], files, "", `the dir "dev/b" is not in the plan list of this pull request`},
		{"subdirectory does not count", command.Command{Dir: "dev"}, nil, files, "", `the dir "dev" is not in the plan list`},
		{"root", command.Command{Dir: "."}, nil, []string{"README.md"}, "", ""},
		{"workspace alone", command.Command{Workspace: "prod"}, projects[:1], []string{"x/y.tf"}, "dev-a", ""},
		{"project covers the files", command.Command{Project: "dev-a"}, projects[:1], files, "dev-a", ""},
		{"files outside the project", command.Command{Project: "dev-b"}, projects[1:], append(files, "README.md"), "", "not in the requested project (--restrict-file-list): `dev/a`, `.`"},
		{"regexp keeps the modified", command.Command{Project: "dev-.*", ProjectRegexp: re}, projects, files, "dev-a", ""},
		{"regexp, nothing modified", command.Command{Project: "dev-.*", ProjectRegexp: re}, projects, nil, "", `no modified files match requested project "dev-.*"`},
	} {
		t.Run(tc.name, func(t *testing.T) {
			got, err := restrictToModified(&tc.cmd, append([]repocfg.Project(nil), tc.projects...), tc.files)
			if tc.wantErr != "" {
				if err == nil || !strings.Contains(err.Error(), tc.wantErr) {
					t.Fatalf("err %v, want %q", err, tc.wantErr)
				}
				return
			}
			var names []string
			for _, p := range got {
				names = append(names, p.Name)
			}
			if err != nil || strings.Join(names, ",") != tc.want {
				t.Fatalf("got %v, %v; want %q", names, err, tc.want)
			}
		})
	}
}
