package github_test

import (
	"net/http"
	"slices"
	"testing"

	ghp "github.com/atollhq/atoll/vcs/github"
)

func TestRecognizesAndPullRefs(t *testing.T) {
	p := newFake(t).provider(t)
	for _, tc := range []struct {
		h    http.Header
		want bool
	}{
		{http.Header{"X-Github-Event": {"pull_request"}}, true},
		{http.Header{"Authorization": {"Basic eDp5"}}, false},
		{http.Header{}, false},
	} {
		if got := p.Recognizes(tc.h); got != tc.want {
			t.Errorf("provider Recognizes(%v) = %v; want %v", tc.h, got, tc.want)
		}
		if got := (ghp.Recognizer{}).Recognizes(tc.h); got != tc.want {
			t.Errorf("Recognizer.Recognizes(%v) = %v; want %v", tc.h, got, tc.want)
		}
	}
	if got := p.PullRefs(1347); !slices.Equal(got, []string{"refs/pull/1347/head"}) {
		t.Fatalf("PullRefs(1347) = %v", got)
	}
}
