package web_test

import (
	"context"
	"encoding/json"
	"net/http"
	"strings"
	"testing"

	"github.com/atollhq/atoll"
	"github.com/atollhq/atoll/store"
)

func TestPlanPageShowsPolicyChecks(t *testing.T) {
	f := newPullFixture(t)
	planID, _ := f.addPlan(t, "ready", []byte(`{"format_version":"1.2"}`), "Plan: 1 to add, 0 to change, 0 to destroy.")
	page := func() string {
		t.Helper()
		rec := f.do(t, "GET", "/plans/"+itoa(planID), "", "", vera)
		if rec.Code != http.StatusOK {
			t.Fatalf("status %d: %s", rec.Code, rec.Body)
		}
		return rec.Body.String()
	}
	if strings.Contains(page(), "Policy checks") {
		t.Fatal("a plan that was not checked shows a policy section")
	}
	checks := []atoll.PolicyCheck{
		{PolicySet: "no-production", Output: "FAIL - ready.json - main - <denied> input", ApproveCount: 2},
		{PolicySet: "baseline", Passed: true, Output: "1 test, 1 passed", ApproveCount: 1},
	}
	err := f.db.Update(context.Background(), func(tx *store.Tx) error {
		if err := tx.InsertPolicyChecks(planID, checks); err != nil {
			return err
		}
		return tx.ApprovePolicyCheck(checks[0].ID, "carol")
	})
	if err != nil {
		t.Fatal(err)
	}
	wantContains(t, page(), `id="policy-checks"`, "no-production", `class="badge badge-policy-failed"`, "1 of 2 approval(s)", "carol",
		"FAIL - ready.json - main - &lt;denied&gt; input", "baseline", `class="badge badge-policy-passed"`, "1 test, 1 passed")

	rec := f.do(t, "GET", "/api/v1/plans/"+itoa(planID), "", "", vera)
	var out struct {
		Policies []atoll.PolicyCheck `json:"policies"`
	}
	if err := json.Unmarshal(rec.Body.Bytes(), &out); err != nil || rec.Code != http.StatusOK {
		t.Fatalf("API: %d %v: %s", rec.Code, err, rec.Body)
	}
	if len(out.Policies) != 2 || out.Policies[1].PolicySet != "no-production" || out.Policies[1].Passed ||
		len(out.Policies[1].Approvals) != 1 || out.Policies[1].Approvals[0].User != "carol" {
		t.Fatalf("API policies = %+v", out.Policies)
	}
}
