package main_test

import (
	"context"
	"encoding/json"
	"fmt"
	"net/http"
	"strings"
	"testing"

	"github.com/atollhq/atoll"
	main "github.com/atollhq/atoll/cmd/atoll"
	"github.com/atollhq/atoll/store"
)

// --approval-four-eyes on a real server, through a GitHub comment: the
// plan run by the comment of octo-olivia cannot be approved by the account
// mapped to that login (olivia@example.com, named by e-mail as OIDC
// accounts are): 403 with the reason, nothing recorded; carol approves, and
// the apply names her.
func TestSecurityFourEyesGitHubCommentTrigger(t *testing.T) {
	ctx := context.Background()
	e := newE2EWith(t, map[string]string{"staging/main.tf": tfProject("staging", 1)}, func(c *main.Config) {
		c.PlanApproval = "acme/infra"
		c.ApprovalFourEyes = true
	})

	// Two operators with API tokens; olivia's account has her GitHub login.
	tokens := map[string]string{}
	for name, logins := range map[string][]string{"olivia@example.com": {"octo-olivia"}, "carol": nil} {
		secret, hash := atoll.NewSecret()
		err := e.m.DB.Update(ctx, func(tx *store.Tx) error {
			u, err := tx.CreateUser(atoll.NewUser{Name: name, Role: atoll.RoleOperator, Source: atoll.UserSourceOIDC, OIDCSubject: "idp " + name})
			if err != nil {
				return err
			}
			if err := tx.SetUserVCSLogins(u.ID, logins); err != nil {
				return err
			}
			_, err = tx.CreateToken(u.ID, "test", hash)
			return err
		})
		if err != nil {
			t.Fatal(err)
		}
		tokens[name] = secret
	}

	e.open(1, "scale-staging", map[string]string{"staging/main.tf": tfProject("staging", 2)}, "staging/main.tf")
	mustContain(t, "autoplan comment", e.waitComment(1, 1), "Plan: 2 to add")
	e.commentAs("octo-olivia", 1, "atlantis plan")
	mustContain(t, "plan comment", e.waitComment(1, 2), "Plan: 2 to add")
	plans := demoPullPlans(t, e.m, "/api/v1/repos/acme/infra/pulls/1")
	if len(plans) != 1 {
		t.Fatalf("pending plans = %+v", plans)
	}
	ref, err := e.m.DB.PlanRef(ctx, plans[0].ID)
	if err != nil || ref.Trigger != "octo-olivia" {
		t.Fatalf("plan = %+v, %v; want the comment's plan", ref, err)
	}

	approve := func(who string) (int, map[string]any) {
		t.Helper()
		req, _ := http.NewRequest("POST", fmt.Sprintf("%s/api/v1/plans/%d/approvals", e.m.URL, plans[0].ID), strings.NewReader(`{"decision":"approve","reason":"LGTM"}`))
		req.Header.Set("Content-Type", "application/json")
		req.Header.Set("Authorization", "Bearer "+tokens[who])
		res, err := http.DefaultClient.Do(req)
		if err != nil {
			t.Fatal(err)
		}
		defer res.Body.Close()
		var out map[string]any
		json.NewDecoder(res.Body).Decode(&out)
		return res.StatusCode, out
	}
	want := "You triggered this plan as octo-olivia, one of your VCS logins; with four-eyes approval another person must approve it."
	if status, out := approve("olivia@example.com"); status != http.StatusForbidden || out["error"] != want {
		t.Fatalf("approval by the trigger's account = %d %v", status, out)
	}
	if d, err := e.m.DB.PlanDecision(ctx, plans[0].ID); err != nil || d != nil {
		t.Fatalf("a refused approval was stored: %+v, %v", d, err)
	}
	if status, out := approve("carol"); status != http.StatusCreated || out["user"] != "carol" {
		t.Fatalf("approval by carol = %d %v", status, out)
	}
	e.comment(1, "atlantis apply")
	mustContain(t, "approved apply comment", e.waitComment(1, 3), "Apply complete!", "Approved by carol: LGTM")
}
