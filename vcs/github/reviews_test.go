package github_test

import (
	"context"
	"testing"
)

// DismissApprovals dismisses each reviewer's standing approval (their
// latest verdict), across pages, and nothing else.
func TestDismissApprovals(t *testing.T) {
	f := newFake(t)
	p := f.provider(t)
	review := func(id int, login, state string) map[string]any {
		return map[string]any{"id": id, "user": map[string]any{"login": login}, "state": state}
	}
	reviews := []map[string]any{
		review(1, "alice", "APPROVED"),
		review(2, "bob", "APPROVED"),
		review(3, "bob", "CHANGES_REQUESTED"), // bob's verdict: not an approval
		review(4, "carol", "COMMENTED"),
		review(5, "dave", "APPROVED"),
	}
	for i := 0; i < 120; i++ { // a second page of comments only
		reviews = append(reviews, review(100+i, "erin", "COMMENTED"))
	}
	reviews = append(reviews, review(999, "frank", "APPROVED"))
	f.setReviews(reviews)
	n, err := p.DismissApprovals(context.Background(), helloWorld, pullNum)
	if err != nil || n != 3 {
		t.Fatalf("DismissApprovals = %d, %v; want 3", n, err)
	}
	for _, id := range []string{"1", "5", "999"} {
		if calls := f.callsTo("PUT", "/repos/octocat/Hello-World/pulls/1347/reviews/"+id+"/dismissals"); len(calls) != 1 {
			t.Errorf("review %s: %d dismissals, want 1", id, len(calls))
		}
	}
	if calls := f.callsTo("PUT", "/repos/octocat/Hello-World/pulls/1347/reviews/2/dismissals"); len(calls) != 0 {
		t.Error("bob's superseded approval was dismissed")
	}
	// Nothing left to dismiss the second time.
	if n, err := p.DismissApprovals(context.Background(), helloWorld, pullNum); err != nil || n != 0 {
		t.Fatalf("second DismissApprovals = %d, %v; want 0", n, err)
	}
}
