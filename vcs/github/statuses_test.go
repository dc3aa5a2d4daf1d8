package github_test

import (
	"context"
	"encoding/json"
	"strings"
	"testing"

	"github.com/atollhq/atoll"
	"github.com/atollhq/atoll/vcs"
)

func TestSetStatus(t *testing.T) {
	f := newFake(t)
	p := f.provider(t)
	sha := "6dcb09b5b57875f334f61aebed695e2e4193db5e"
	long := strings.Repeat("é", 200) // multi-byte: the limit is in characters
	err := p.SetStatus(context.Background(), helloWorld, sha, vcs.Status{
		State: vcs.StatusPending, Context: "atlantis/plan: dir/default", Description: long, TargetURL: "https://atoll.example.com/jobs/1",
	})
	if err != nil {
		t.Fatal(err)
	}
	calls := f.callsTo("POST", "/repos/octocat/Hello-World/statuses/"+sha)
	if len(calls) != 1 {
		t.Fatalf("status calls = %d", len(calls))
	}
	var sent map[string]string
	if err := json.Unmarshal(calls[0].Body, &sent); err != nil {
		t.Fatal(err)
	}
	desc := []rune(sent["description"])
	if len(desc) != 140 || !strings.HasPrefix(long, string(desc[:137])) || string(desc[137:]) != "..." {
		t.Errorf("description = %q (%d chars)", sent["description"], len(desc))
	}
	if sent["state"] != "pending" || sent["context"] != "atlantis/plan: dir/default" || sent["target_url"] != "https://atoll.example.com/jobs/1" {
		t.Errorf("sent %v", sent)
	}

	// Short descriptions pass unchanged; an empty target URL is left out.
	if err := p.SetStatus(context.Background(), helloWorld, sha, vcs.Status{State: vcs.StatusSuccess, Context: "atlantis/apply", Description: "2 projects applied"}); err != nil {
		t.Fatal(err)
	}
	calls = f.callsTo("POST", "/repos/octocat/Hello-World/statuses/"+sha)
	var second map[string]any
	json.Unmarshal(calls[1].Body, &second)
	if _, ok := second["target_url"]; ok || second["description"] != "2 projects applied" || second["state"] != "success" {
		t.Errorf("sent %v", second)
	}
}

func TestSetStatusRejectsUnknownState(t *testing.T) {
	f := newFake(t)
	err := f.provider(t).SetStatus(context.Background(), helloWorld, "abc", vcs.Status{State: "running", Context: "atlantis/plan"})
	if atoll.ErrorCode(err) != atoll.EINVALID {
		t.Errorf("err = %v; want EINVALID", err)
	}
	if n := len(f.allCalls()); n != 0 {
		t.Errorf("made %d calls", n)
	}
}
