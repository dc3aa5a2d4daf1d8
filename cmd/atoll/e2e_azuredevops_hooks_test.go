package main_test

import (
	"context"
	"log/slog"
	"net/http"
	"strings"
	"testing"

	"github.com/atollhq/atoll"
	main "github.com/atollhq/atoll/cmd/atoll"
	"github.com/atollhq/atoll/vcs/azuredevops/azuretest"
)

// The Test button of every subscription Atoll needs sends Microsoft's
// sample event, as it is: Atoll answers 200 and records nothing, so that
// Azure DevOps shows the subscription as working; with a wrong password it
// answers 401, which is what the button is there to show.
func TestAzureDevOpsTestButton(t *testing.T) {
	e := newADOE2E(t, map[string]string{"main.tf": tfProject("main", 1)}, nil)
	for _, name := range []string{"pullrequest.created.json", "pullrequest.updated.json", "pullrequest.merged.json",
		"pullrequest-comment.v2.json", "pullrequest-comment.v1.json"} {
		if code := e.hook(name, func(map[string]any) {}, adoHookUser, adoHookPass); code != http.StatusOK {
			t.Errorf("Test button, %s: status %d, want 200", name, code)
		}
		if code := e.hook(name, func(map[string]any) {}, adoHookUser, "wrong"); code != http.StatusUnauthorized {
			t.Errorf("Test button with a wrong password, %s: status %d, want 401", name, code)
		}
	}
	pulls, err := e.m.DB.Pulls(context.Background(), atoll.PullFilter{})
	if err != nil || len(pulls) != 0 {
		t.Fatalf("pulls recorded = %v, %v; want none", pulls, err)
	}
}

// An Azure DevOps Server reached as one host (the fake's address, in
// --azuredevops-hostname) writes another into its payloads, its public URL
// (http://tfs01:8080). Named with --azuredevops-notification-url, those
// payloads are read as the configured host: the pull request is recorded
// there and planned from it. Without the flag they are refused 400, with
// the flag to set.
func TestAzureDevOpsServerNotificationURL(t *testing.T) {
	const notify = "http://tfs01:8080"
	var logs lockedBuffer
	e := newADOE2E(t, map[string]string{"main.tf": tfProject("main", 1)}, func(m *main.Main) {
		m.Config.AzureNotificationURL = notify
		m.Logger = slog.New(slog.NewJSONHandler(&logs, nil))
	})
	// The start-up message names both.
	mustContain(t, "start-up log", logs.String(), "notification URL", `"notification_urls":"`+notify+`"`, `"hostname":"`+e.az.URL+`"`)
	renamed := func(edit func(map[string]any)) func(map[string]any) {
		return func(p map[string]any) {
			edit(p)
			renameURLs(p, e.az.URL, notify)
		}
	}
	addPull(e, 1, "grow")
	if code := e.hook("pullrequest.created.json", renamed(e.pullEdit(1)), adoHookUser, adoHookPass); code != http.StatusOK {
		t.Fatalf("created webhook naming %s: status %d", notify, code)
	}
	mustContain(t, "autoplan", e.waitComment(1, 1), "Plan: 2 to add")
	pull, err := e.m.DB.PullByNumber(context.Background(), adoOrg+"/"+adoProject+"/"+adoRepo, 1)
	if err != nil || pull == nil {
		t.Fatalf("pull recorded = %v, %v", pull, err)
	}
	if !strings.HasPrefix(pull.URL, e.az.URL+"/") {
		t.Errorf("pull URL %s, want one on the configured host %s", pull.URL, e.az.URL)
	}
}

func TestAzureDevOpsServerWithoutNotificationURL(t *testing.T) {
	e := newADOE2E(t, map[string]string{"main.tf": tfProject("main", 1)}, nil)
	addPull(e, 1, "grow")
	code := e.hook("pullrequest.created.json", func(p map[string]any) {
		e.pullEdit(1)(p)
		renameURLs(p, e.az.URL, "http://tfs01:8080")
	}, adoHookUser, adoHookPass)
	if code != http.StatusBadRequest {
		t.Fatalf("created webhook naming an unconfigured host: status %d, want 400", code)
	}
}

// addPull is open without its webhook: a pull request changing main.tf.
func addPull(e *adoE2E, number int, branch string) {
	sha := e.repo.branch(branch, map[string]string{"main.tf": tfProject("main", 2)})
	e.az.AddPull(adoOrg, adoProject, adoRepo, azuretest.Pull{Number: number, Title: "change " + branch, Author: "alice@acme.example",
		SourceRef: branch, TargetRef: "main", HeadSHA: sha, BaseSHA: e.base,
		Changes: []azuretest.Change{{Path: "/main.tf", ChangeType: "edit"}}})
}

// renameURLs replaces from by to at the start of every string in v.
func renameURLs(v map[string]any, from, to string) {
	for k, x := range v {
		switch x := x.(type) {
		case string:
			if strings.HasPrefix(x, from) {
				v[k] = to + strings.TrimPrefix(x, from)
			}
		case map[string]any:
			renameURLs(x, from, to)
		}
	}
}
