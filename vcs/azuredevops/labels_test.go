package azuredevops_test

import (
	"context"
	"reflect"
	"testing"
)

// A pull request's tags come with the pull request as its labels.
func TestGetPullLabels(t *testing.T) {
	cases := []struct {
		name   string
		labels []string
		want   []string
	}{
		{"none", nil, nil},
		{"two", []string{"no-autoplan", "Keep Locks"}, []string{"no-autoplan", "Keep Locks"}},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			srv := newFake(t)
			pr := basePull()
			pr.Labels = tc.labels
			srv.AddPull(org, project, repoName, pr)
			got, err := newProvider(t, srv).GetPull(context.Background(), repo, 7)
			if err != nil {
				t.Fatal(err)
			}
			if !reflect.DeepEqual(got.Labels, tc.want) {
				t.Errorf("Labels = %q, want %q", got.Labels, tc.want)
			}
			for _, l := range tc.want {
				if !got.HasLabel(l) {
					t.Errorf("HasLabel(%q) = false", l)
				}
			}
			if got.HasLabel("") || got.HasLabel("keep locks") {
				t.Error("HasLabel matches an empty or differently spelled label")
			}
		})
	}
}
