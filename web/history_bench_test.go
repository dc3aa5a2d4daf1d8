package web_test

import (
	"context"
	"fmt"
	"io"
	"log/slog"
	"net/http"
	"net/http/httptest"
	"testing"

	"github.com/atollhq/atoll"
	"github.com/atollhq/atoll/store"
	"github.com/atollhq/atoll/store/storetest"
	"github.com/atollhq/atoll/web"
)

// BenchmarkHistoryPages is the server time of the runs and locks pages with
// 100,000 jobs (100 pull requests) and 10,000 locks, rendered in full as a
// browser gets them. Figures in docs/performance.md.
//
//	go test -run '^$' -bench BenchmarkHistoryPages -benchtime 50x ./web
func BenchmarkHistoryPages(b *testing.B) {
	ctx := context.Background()
	db := storetest.Open(b)
	var pulls []int64
	err := db.Update(ctx, func(tx *store.Tx) error {
		repo, err := tx.UpsertRepo(atoll.Repo{VCS: atoll.VCSLocal, Host: "local", Owner: "acme", Name: "infra"})
		if err != nil {
			return err
		}
		for p := range 100 {
			id, err := tx.UpsertPull(repo, atoll.Pull{Number: p + 1, HeadSHA: "abc"})
			if err != nil {
				return err
			}
			pulls = append(pulls, id)
		}
		for i := range 10_000 {
			project, err := tx.UpsertProject(repo, atoll.Project{Dir: fmt.Sprint("stacks/", i), Workspace: "default"})
			if err != nil {
				return err
			}
			if _, err := tx.TakeLock(project, pulls[i%100], fmt.Sprint("user", i%7)); err != nil {
				return err
			}
		}
		return nil
	})
	if err != nil {
		b.Fatal(err)
	}
	for start := 0; start < 100_000; start += 5000 {
		err := db.Update(ctx, func(tx *store.Tx) error {
			for i := start; i < start+5000; i++ {
				j := &atoll.Job{Kind: atoll.JobPlan, PullID: pulls[i%100], ProjectID: int64(i%10_000 + 1), HeadSHA: "abc", User: fmt.Sprint("user", i%7)}
				if err := tx.InsertJob(j); err != nil {
					return err
				}
			}
			return nil
		})
		if err != nil {
			b.Fatal(err)
		}
	}
	h := (&web.Server{DB: db, Logger: slog.New(slog.NewTextHandler(io.Discard, nil))}).Handler()
	viewer := &atoll.User{Name: "vera", Role: atoll.RoleOperator}
	for _, path := range []string{"/runs", "/runs?before=1000", "/runs?user=user3&before=1000", "/runs?repo=acme/infra&pull=42",
		"/locks", "/locks?pull=42", "/locks?user=user3&older=1h"} {
		b.Run(path, func(b *testing.B) {
			size := 0
			for b.Loop() {
				req := httptest.NewRequest(http.MethodGet, path, nil)
				req = req.WithContext(atoll.NewContextWithUser(req.Context(), viewer))
				rec := httptest.NewRecorder()
				h.ServeHTTP(rec, req)
				if rec.Code != http.StatusOK {
					b.Fatalf("%d: %s", rec.Code, rec.Body)
				}
				size = rec.Body.Len()
			}
			b.ReportMetric(float64(size), "bytes/page")
		})
	}
}
