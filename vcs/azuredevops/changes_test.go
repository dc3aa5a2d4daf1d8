package azuredevops_test

import (
	"context"
	"fmt"
	"net/url"
	"reflect"
	"slices"
	"strings"
	"testing"

	"github.com/atollhq/atoll/vcs/azuredevops/azuretest"
)

func TestChangedFiles(t *testing.T) {
	cases := []struct {
		name    string
		changes []azuretest.Change
		want    []string
	}{
		{"none", nil, nil},
		{"edit add delete", []azuretest.Change{{Path: "/main.tf"}, {Path: "/modules/vpc/vars.tf", ChangeType: "add"}, {Path: "/old.tf", ChangeType: "delete"}},
			[]string{"main.tf", "modules/vpc/vars.tf", "old.tf"}},
		{"rename gives both paths", []azuretest.Change{{Path: "/prod/main.tf", ChangeType: "rename", OriginalPath: "/staging/main.tf"}},
			[]string{"prod/main.tf", "staging/main.tf"}},
		{"rename reported as sourceServerItem", []azuretest.Change{{Path: "/prod/main.tf", ChangeType: "rename", SourceServerItem: "/staging/main.tf"}},
			[]string{"prod/main.tf", "staging/main.tf"}},
		{"edit and rename", []azuretest.Change{{Path: "/b/x.tf", ChangeType: "edit, rename", OriginalPath: "/a/x.tf"}},
			[]string{"b/x.tf", "a/x.tf"}},
		{"folders skipped", []azuretest.Change{{Path: "/modules/new", ChangeType: "add", Folder: true}, {Path: "/modules/new/main.tf", ChangeType: "add"}},
			[]string{"modules/new/main.tf"}},
		{"non-ASCII and spaces", []azuretest.Change{{Path: "/envs/prød/my file.tf"}}, []string{"envs/prød/my file.tf"}},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			srv := newFake(t)
			pr := basePull()
			pr.Changes = tc.changes
			srv.AddPull(org, project, repoName, pr)
			got, err := newProvider(t, srv).ChangedFiles(context.Background(), repo, 7)
			if err != nil {
				t.Fatal(err)
			}
			if !reflect.DeepEqual(got, tc.want) {
				t.Errorf("ChangedFiles = %q, want %q", got, tc.want)
			}
		})
	}
}

// changeCalls are the iteration-changes requests the server received.
func changeCalls(srv *azuretest.Server) []azuretest.Call {
	var out []azuretest.Call
	for _, c := range srv.Calls() {
		if strings.HasSuffix(c.Path, "/changes") {
			out = append(out, c)
		}
	}
	return out
}

// More changes than one page holds are fetched page by page, following
// nextSkip.
func TestChangedFilesPaging(t *testing.T) {
	srv := newFake(t)
	pr := basePull()
	var want []string
	for i := range 4500 {
		p := fmt.Sprintf("stacks/s%04d/main.tf", i)
		pr.Changes = append(pr.Changes, azuretest.Change{Path: "/" + p})
		want = append(want, p)
	}
	srv.AddPull(org, project, repoName, pr)
	got, err := newProvider(t, srv).ChangedFiles(context.Background(), repo, 7)
	if err != nil {
		t.Fatal(err)
	}
	if !slices.Equal(got, want) {
		t.Errorf("got %d paths (first %q), want %d", len(got), got[:min(3, len(got))], len(want))
	}
	calls := changeCalls(srv)
	if len(calls) != 3 {
		t.Fatalf("changes calls = %d, want 3 pages of 2000", len(calls))
	}
	for i, c := range calls {
		q, _ := url.ParseQuery(c.Query)
		if q.Get("$skip") != fmt.Sprint(i*2000) || q.Get("$top") != "2000" || q.Get("$compareTo") != "0" {
			t.Errorf("page %d query = %s", i, c.Query)
		}
	}
}

// The latest iteration is the one compared: after a push, iteration 2.
func TestChangedFilesLatestIteration(t *testing.T) {
	srv := newFake(t)
	srv.SetHead(org, project, repoName, 7, "3333333333333333333333333333333333333333")
	if _, err := newProvider(t, srv).ChangedFiles(context.Background(), repo, 7); err != nil {
		t.Fatal(err)
	}
	calls := changeCalls(srv)
	if len(calls) != 1 || !strings.HasSuffix(calls[0].Path, "/pullRequests/7/iterations/2/changes") {
		t.Errorf("changes calls = %+v; want one for iteration 2", calls)
	}
}
