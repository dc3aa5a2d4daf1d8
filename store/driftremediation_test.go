package store_test

import (
	"context"
	"testing"
	"time"

	"github.com/atollhq/atoll"
	"github.com/atollhq/atoll/store/storetest"
)

// Remediation runs: kept whole, read back by id, listed per repository
// newest first; a duplicate id is refused.
func TestDriftRemediations(t *testing.T) {
	ctx := context.Background()
	db := storetest.Open(t)
	t0 := time.Date(2026, 1, 2, 3, 4, 5, 0, time.UTC)
	for i, id := range []string{"a", "b", "c"} {
		r := atoll.DriftRemediation{ID: id, Repo: "github.com/acme/infra", Ref: "main", Action: "plan", Status: "success",
			StartedAt: t0.Add(time.Duration(i) * time.Minute), CompletedAt: t0.Add(time.Duration(i)*time.Minute + time.Second), Result: []byte(`{"id":"` + id + `"}`)}
		if err := db.AddDriftRemediation(ctx, r); err != nil {
			t.Fatal(err)
		}
	}
	if err := db.AddDriftRemediation(ctx, atoll.DriftRemediation{ID: "x", Repo: "github.com/other/repo", StartedAt: t0, Result: []byte(`{}`)}); err != nil {
		t.Fatal(err)
	}
	if err := db.AddDriftRemediation(ctx, atoll.DriftRemediation{ID: "a", Repo: "github.com/acme/infra", StartedAt: t0, Result: []byte(`{}`)}); err == nil {
		t.Error("a duplicate id was stored")
	}
	r, err := db.DriftRemediation(ctx, "b")
	if err != nil || r.Repo != "github.com/acme/infra" || string(r.Result) != `{"id":"b"}` || !r.StartedAt.Equal(t0.Add(time.Minute)) || r.CompletedAt.IsZero() {
		t.Fatalf("%+v, %v", r, err)
	}
	if r, err := db.DriftRemediation(ctx, "x"); err != nil || !r.CompletedAt.IsZero() {
		t.Fatalf("not completed: %+v, %v", r, err)
	}
	if _, err := db.DriftRemediation(ctx, "nope"); atoll.ErrorCode(err) != atoll.ENOTFOUND {
		t.Fatalf("unknown id: %v", err)
	}
	list, err := db.DriftRemediations(ctx, "github.com/acme/infra", 2)
	if err != nil || len(list) != 2 || list[0].ID != "c" || list[1].ID != "b" {
		t.Fatalf("list %+v, %v", list, err)
	}
	if list, err := db.DriftRemediations(ctx, "github.com/nobody/repo", 10); err != nil || len(list) != 0 {
		t.Fatalf("empty list %+v, %v", list, err)
	}
}
