package web_test

import (
	"context"
	"io"
	"log/slog"
	"strings"
	"testing"

	"github.com/atollhq/atoll"
	"github.com/atollhq/atoll/store"
	"github.com/atollhq/atoll/web"
)

// dispatchStore is a store whose Dispatch the test answers.
type dispatchStore struct {
	*store.DB
	dispatch func(jobID int64) (*atoll.Dispatch, error)
}

func (d dispatchStore) Dispatch(_ context.Context, jobID int64) (*atoll.Dispatch, error) {
	return d.dispatch(jobID)
}

// The job page names the worker that runs or ran a dispatched job, or
// the pool it waits for; a local job (ENOTFOUND) shows neither.
func TestJobPageNamesTheWorker(t *testing.T) {
	f := newPageFixture(t)
	var answer *atoll.Dispatch
	var asked int64
	db := dispatchStore{DB: f.db, dispatch: func(id int64) (*atoll.Dispatch, error) {
		asked = id
		if answer == nil {
			return nil, atoll.Errorf(atoll.ENOTFOUND, "No dispatch.")
		}
		return answer, nil
	}}
	h := (&web.Server{DB: db, Logger: slog.New(slog.NewTextHandler(io.Discard, nil))}).Handler()
	u := &atoll.User{Name: "vera", Role: atoll.RoleViewer}
	job := "/jobs/" + itoa(f.doneJob)
	for _, tc := range []struct {
		d    *atoll.Dispatch
		want string
	}{
		{&atoll.Dispatch{JobID: f.doneJob, Pool: "eu", Attempt: 2, State: atoll.DispatchDone, Worker: "w-eu-1"}, "Worker: w-eu-1 (pool eu, attempt 2)"},
		{&atoll.Dispatch{JobID: f.doneJob, Pool: "eu", Attempt: 1, State: atoll.DispatchQueued}, "Waiting for a worker in pool eu"},
	} {
		answer = tc.d
		for _, path := range []string{job, job + "?section=header"} {
			rec := serveAs(h, u, "GET", path)
			if rec.Code != 200 || !strings.Contains(rec.Body.String(), tc.want) || asked != f.doneJob {
				t.Errorf("%s with %+v = %d, lacks %q (asked %d)", path, tc.d, rec.Code, tc.want, asked)
			}
		}
	}
	answer = nil
	rec := serveAs(h, u, "GET", job)
	if rec.Code != 200 || strings.Contains(rec.Body.String(), `id="job-worker"`) {
		t.Errorf("local job page = %d, names a worker", rec.Code)
	}
}
