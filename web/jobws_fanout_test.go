package web_test

import (
	"context"
	"fmt"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/gorilla/websocket"

	"github.com/atollhq/atoll"
	"github.com/atollhq/atoll/store"
)

// writeJobLog writes lines lines of size bytes to a running job as the
// runner's log sink does (each line published at once, stored 500 at a
// time), then finishes the job. It never waits for a viewer.
func writeJobLog(tb testing.TB, s *liveServer, job int64, lines, size int) {
	ctx := context.Background()
	pad := strings.Repeat("x", max(size-20, 0))
	var pending []atoll.LogLine
	for seq := int64(1); seq <= int64(lines); seq++ {
		l := atoll.LogLine{JobID: job, Seq: seq, Stream: atoll.StreamStdout, Time: time.Now(), Text: fmt.Sprintf("%08d %s", seq, pad)}
		s.Runner.Hub.Publish(l)
		pending = append(pending, l)
		if len(pending) == 500 || seq == int64(lines) {
			if err := s.DB.AppendLogs(ctx, pending); err != nil {
				tb.Error(err)
				return
			}
			pending = nil
		}
	}
	if err := s.DB.Update(ctx, func(tx *store.Tx) error { return tx.FinishJob(job, atoll.JobSucceeded, "", nil) }); err != nil {
		tb.Error(err)
	}
	s.Runner.Hub.End(job)
}

// viewer reads a job's log until the normal closure and returns the
// delay of each line (from its publication to its arrival) and any error,
// such as a line out of order.
func viewer(conn *websocket.Conn, lines int) ([]time.Duration, error) {
	defer conn.Close()
	delays := make([]time.Duration, 0, lines)
	next := int64(1)
	conn.SetReadDeadline(time.Now().Add(5 * time.Minute))
	for {
		var l atoll.LogLine
		err := conn.ReadJSON(&l)
		if websocket.IsCloseError(err, websocket.CloseNormalClosure) {
			if next != int64(lines)+1 {
				return delays, fmt.Errorf("closed after %d lines; want %d", next-1, lines)
			}
			return delays, nil
		} else if err != nil {
			return delays, fmt.Errorf("after %d lines: %w", next-1, err)
		}
		if l.Seq != next {
			return delays, fmt.Errorf("line %d arrived when %d was due", l.Seq, next)
		}
		delays = append(delays, time.Since(l.Time))
		next++
	}
}

// connectViewers opens n websockets on job from line 1.
func connectViewers(tb testing.TB, s *liveServer, job int64, n int) []*websocket.Conn {
	conns := make([]*websocket.Conn, n)
	for i := range conns {
		c, _, err := websocket.DefaultDialer.Dial(wsURL(s, job, 1), nil)
		if err != nil {
			tb.Fatal(err)
		}
		conns[i] = c
	}
	return conns
}

// 100 viewers of one job each get every line once, in order, while one
// more viewer reads nothing until the job has written its whole log: the
// job's writes do not wait for it (the hub drops what a viewer cannot take,
// and the viewer reads that back from the database), and it too gets every
// line once it reads.
func TestJobWebsocketManyViewers(t *testing.T) {
	s := startLiveServer(t, nil)
	job := runningJob(t, s.DB)
	const lines, size = 2000, 200
	conns := connectViewers(t, s, job, 100)
	stalled := connectViewers(t, s, job, 1)[0]

	var wg sync.WaitGroup
	errs := make([]error, len(conns))
	for i, c := range conns {
		wg.Add(1)
		go func() { defer wg.Done(); _, errs[i] = viewer(c, lines) }()
	}
	wrote := make(chan struct{})
	go func() { defer close(wrote); writeJobLog(t, s, job, lines, size) }()
	<-wrote // while one viewer has read nothing yet
	wg.Wait()
	for i, err := range errs {
		if err != nil {
			t.Errorf("viewer %d: %v", i, err)
		}
	}
	if _, err := viewer(stalled, lines); err != nil {
		t.Errorf("the viewer that read late: %v", err)
	}
}

// A 10 MB log (50,000 lines of 200 bytes) written as fast as the store
// takes it, to 100 viewers on real websockets: the delay of each line from
// its publication to its arrival at each viewer (p50/p99/max over all 5
// million deliveries).
func BenchmarkJobLogFanOut(b *testing.B) {
	const lines, size, viewers = 50_000, 200, 100
	for b.Loop() {
		b.StopTimer()
		s := startLiveServer(b, nil)
		job := runningJob(b, s.DB)
		conns := connectViewers(b, s, job, viewers)
		b.StartTimer()
		var wg sync.WaitGroup
		var mu sync.Mutex
		var all []time.Duration
		for _, c := range conns {
			wg.Add(1)
			go func() {
				defer wg.Done()
				d, err := viewer(c, lines)
				if err != nil {
					b.Error(err)
				}
				mu.Lock()
				all = append(all, d...)
				mu.Unlock()
			}()
		}
		writeJobLog(b, s, job, lines, size)
		wg.Wait()
		b.StopTimer()
		slices.Sort(all)
		if len(all) > 0 {
			b.ReportMetric(float64(all[len(all)/2].Microseconds())/1000, "p50-ms")
			b.ReportMetric(float64(all[len(all)*99/100].Microseconds())/1000, "p99-ms")
			b.ReportMetric(float64(all[len(all)-1].Microseconds())/1000, "max-ms")
		}
		b.StartTimer()
	}
}
