package web_test

import (
	"bufio"
	"context"
	"fmt"
	"io"
	"log/slog"
	"net/http"
	"net/http/httptest"
	"runtime"
	"strings"
	"testing"
	"time"

	"github.com/atollhq/atoll"
	"github.com/atollhq/atoll/inmem"
	"github.com/atollhq/atoll/store"
	"github.com/atollhq/atoll/store/storetest"
	"github.com/atollhq/atoll/web"
)

// benchLog stores a finished job with n log lines of Terraform-like,
// coloured output and returns the database and the job.
func benchLog(b *testing.B, n int) (*store.DB, int64) {
	b.Helper()
	ctx := context.Background()
	db := storetest.Open(b)
	var job int64
	err := db.Update(ctx, func(tx *store.Tx) error {
		repoID, err := tx.UpsertRepo(atoll.Repo{VCS: atoll.VCSLocal, Host: "local", Owner: "acme", Name: "infra"})
		if err != nil {
			return err
		}
		pullID, err := tx.UpsertPull(repoID, atoll.Pull{Number: 1, HeadSHA: "abc"})
		if err != nil {
			return err
		}
		projectID, err := tx.UpsertProject(repoID, atoll.Project{Dir: ".", Workspace: "default"})
		if err != nil {
			return err
		}
		j := &atoll.Job{Kind: atoll.JobPlan, PullID: pullID, ProjectID: projectID, HeadSHA: "abc"}
		if err := tx.InsertJob(j); err != nil {
			return err
		}
		job = j.ID
		return tx.FinishJob(j.ID, atoll.JobSucceeded, "", nil)
	})
	if err != nil {
		b.Fatal(err)
	}
	batch := make([]atoll.LogLine, 0, 5000)
	for seq := 1; seq <= n; seq++ {
		text := fmt.Sprintf("  \x1b[32m+\x1b[0m resource \"aws_s3_bucket\" \"bucket_%06d\" { \x1b[1mbucket\x1b[0m = \"atoll-%06d\" }", seq, seq)
		batch = append(batch, atoll.LogLine{JobID: job, Seq: int64(seq), Stream: atoll.StreamStdout, Time: time.Now(), Text: text})
		if len(batch) == cap(batch) || seq == n {
			if err := db.AppendLogs(ctx, batch); err != nil {
				b.Fatal(err)
			}
			batch = batch[:0]
		}
	}
	return db, job
}

// heapSampler is a writer that records the largest live heap (after a GC)
// seen every `every` bytes written through it, above the live heap when it
// was made.
type heapSampler struct {
	every, n, next int64
	base, peak     uint64
}

func newHeapSampler() *heapSampler {
	runtime.GC()
	var ms runtime.MemStats
	runtime.ReadMemStats(&ms)
	return &heapSampler{every: 1 << 20, base: ms.HeapAlloc, peak: ms.HeapAlloc}
}

// growthMB is how far the live heap rose above where it was.
func (h *heapSampler) growthMB() float64 { return float64(h.peak-h.base) / (1 << 20) }

func (h *heapSampler) Write(p []byte) (int, error) {
	h.n += int64(len(p))
	if h.n >= h.next {
		h.next = h.n + h.every
		runtime.GC()
		var ms runtime.MemStats
		runtime.ReadMemStats(&ms)
		h.peak = max(h.peak, ms.HeapAlloc)
	}
	return len(p), nil
}

// Streaming a 100,000-line log (about 10 MB) through /jobs/{id}/log.txt,
// and a 25,000-line one for comparison: "paged" is the handler, reading
// 5,000 lines per query; "whole" loads the log in one query first, as the
// API did before, then writes it. live-growth-MB is how far the live heap
// (after a GC, sampled every MB read) rose above where it was before the
// download: the paged handler's stays the same whatever the log's size,
// the whole log's grows with it.
func BenchmarkJobLogDownload(b *testing.B) {
	for _, lines := range []int{25_000, 100_000} {
		db, job := benchLog(b, lines)
		s := &web.Server{DB: db, Logger: slog.New(slog.NewTextHandler(io.Discard, nil)), APISecret: liveSecret}
		srv := httptest.NewServer(s.Handler())
		b.Cleanup(srv.Close)
		url := fmt.Sprintf("%s/jobs/%d/log.txt", srv.URL, job)
		download := func(b *testing.B, w io.Writer) int64 {
			res, err := liveGet(http.DefaultClient, url)
			if err != nil {
				b.Fatal(err)
			}
			n, err := io.Copy(w, res.Body)
			res.Body.Close()
			if err != nil || res.StatusCode != 200 {
				b.Fatalf("%d %v", res.StatusCode, err)
			}
			return n
		}
		b.Run(fmt.Sprintf("paged/lines=%d", lines), func(b *testing.B) {
			var size int64
			b.ReportAllocs()
			for b.Loop() {
				size = download(b, io.Discard)
			}
			b.SetBytes(size)
			h := newHeapSampler()
			download(b, h)
			b.ReportMetric(h.growthMB(), "live-growth-MB")
		})
		b.Run(fmt.Sprintf("whole/lines=%d", lines), func(b *testing.B) {
			whole := func(w io.Writer) {
				all, err := db.Logs(context.Background(), job, 0, 0)
				if err != nil {
					b.Fatal(err)
				}
				bw := bufio.NewWriter(w)
				for _, l := range all {
					bw.WriteString(l.Text)
					bw.WriteByte('\n')
				}
				bw.Flush()
			}
			b.ReportAllocs()
			for b.Loop() {
				whole(io.Discard)
			}
			h := newHeapSampler()
			whole(h)
			b.ReportMetric(h.growthMB(), "live-growth-MB")
		})
		db.Close()
	}
}

// One change reaching 100 pages that listen to GET /api/v1/changes over
// real HTTP connections: "publish" is the fan-out alone, "commit" a store
// write that notifies (its commit included) until all 100 have read it.
func BenchmarkChangesFanOut(b *testing.B) {
	const viewers = 100
	changes := inmem.NewChanges()
	db, _ := benchLog(b, 1)
	db.Changes = changes
	s := &web.Server{DB: db, Logger: slog.New(slog.NewTextHandler(io.Discard, nil)), Changes: changes, APISecret: liveSecret}
	srv := httptest.NewServer(s.Handler())
	b.Cleanup(srv.Close)
	got := make(chan struct{}, viewers*4)
	ctx, cancel := context.WithCancel(context.Background())
	b.Cleanup(cancel)
	for range viewers {
		req, _ := http.NewRequestWithContext(ctx, "GET", srv.URL+"/api/v1/changes", nil)
		req.Header = liveAuth()
		res, err := http.DefaultClient.Do(req)
		if err != nil {
			b.Fatal(err)
		}
		go func() {
			defer res.Body.Close()
			rd := bufio.NewReader(res.Body)
			for {
				line, err := rd.ReadString('\n')
				if err != nil {
					return
				}
				if strings.HasPrefix(line, "data: ") {
					got <- struct{}{}
				}
			}
		}()
	}
	for changes.Subscribers() < viewers {
		time.Sleep(time.Millisecond)
	}
	wait := func() {
		for range viewers {
			<-got
		}
	}
	b.Run("publish", func(b *testing.B) {
		for b.Loop() {
			changes.Publish(atoll.Change{Topic: atoll.TopicJob, JobID: 1})
			wait()
		}
	})
	b.Run("commit", func(b *testing.B) {
		for b.Loop() {
			err := db.Update(ctx, func(tx *store.Tx) error {
				tx.Notify(atoll.Change{Topic: atoll.TopicLock})
				return tx.AddEvent(atoll.Event{Actor: "bench", Action: "tick"})
			})
			if err != nil {
				b.Fatal(err)
			}
			wait()
		}
	})
}
