package main_test

import (
	"net/http"
	"testing"
)

// GitHub names are case-insensitive: webhooks for ACME/INFRA and acme/infra
// are one repository, one pull request, one set of locks.
func TestRepoNameCaseIsOneRepository(t *testing.T) {
	e := newE2E(t)
	for i, spelling := range [][2]string{{"ACME", "INFRA"}, {"acme", "infra"}, {"Acme", "Infra"}} {
		owner, name := spelling[0], spelling[1]
		resp := webhook(t, e.m.URL, "issue_comment", "issue_comment.created.json", webhookSecret, func(p map[string]any) {
			commentEvent(e.cloneURL, 1, "atlantis help")(p)
			repo := p["repository"].(map[string]any)
			repo["name"], repo["full_name"] = name, owner+"/"+name
			repo["owner"].(map[string]any)["login"] = owner
		})
		if resp.StatusCode != http.StatusOK {
			t.Fatalf("webhook for %s/%s: status %d", owner, name, resp.StatusCode)
		}
		e.waitComment(1, i+1) // the help reply
	}
	var pulls []struct {
		Repo   string `json:"repo"`
		Number int    `json:"number"`
	}
	getJSON(t, e.m.URL+"/api/v1/pulls", &pulls)
	if len(pulls) != 1 || pulls[0].Repo != "acme/infra" || pulls[0].Number != 1 {
		t.Fatalf("pulls = %+v; want one, acme/infra #1", pulls)
	}
	// Lookups by name ignore case too, as on GitHub.
	if status := getJSON(t, e.m.URL+"/api/v1/repos/ACME/Infra/pulls/1", nil); status != 200 {
		t.Fatalf("GET /api/v1/repos/ACME/Infra/pulls/1: status %d", status)
	}
}
