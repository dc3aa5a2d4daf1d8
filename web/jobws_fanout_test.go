package web_test

import (
	"context"
	"encoding/json"
	"fmt"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/gorilla/websocket"

	"github.com/atollhq/atoll"
	"github.com/atollhq/atoll/store"
	"github.com/atollhq/atoll/web"
)

// writeJobLog writes lines lines of size bytes to a running job as the
// runner's log sink does (each line published at once, stored 500 at a
// time, or every 100 ms), then finishes the job. It never waits for a
// viewer. rate > 0 spaces the lines at rate per second.
func writeJobLog(tb testing.TB, s *liveServer, job int64, lines, size, rate int) {
	ctx := context.Background()
	pad := strings.Repeat("x", max(size-20, 0))
	var pending []atoll.LogLine
	start, flushed := time.Now(), time.Now()
	for seq := int64(1); seq <= int64(lines); seq++ {
		if rate > 0 {
			if d := time.Until(start.Add(time.Duration(seq) * time.Second / time.Duration(rate))); d > 0 {
				time.Sleep(d)
			}
		}
		l := atoll.LogLine{JobID: job, Seq: seq, Stream: atoll.StreamStdout, Time: time.Now(), Text: fmt.Sprintf("%08d %s", seq, pad)}
		runnerOf(s.Server).Hub.Publish(l)
		pending = append(pending, l)
		if len(pending) == 500 || seq == int64(lines) || time.Since(flushed) >= 100*time.Millisecond {
			if err := s.DB.AppendLogs(ctx, pending); err != nil {
				tb.Error(err)
				return
			}
			pending, flushed = nil, time.Now()
		}
	}
	if err := s.DB.Update(ctx, func(tx *store.Tx) error { return tx.FinishJob(job, atoll.JobSucceeded, "", nil) }); err != nil {
		tb.Error(err)
	}
	runnerOf(s.Server).Hub.End(job)
}

// viewer reads a job's log on conn until the normal closure, as live.js
// does: a connection lost (the server drops a viewer too slow to take its
// lines) is opened again from the last line received. It returns the
// delay of each line from its publication to its arrival, how many times
// it reconnected, and an error for a line out of order, missing or twice.
func viewer(s *liveServer, job int64, conn *websocket.Conn, lines int, query string) (delays []time.Duration, reconnects int, err error) {
	delays = make([]time.Duration, 0, lines)
	next := int64(1)
	var batch []atoll.LogLine
	for {
		if len(batch) > 0 {
			l := batch[0]
			batch = batch[1:]
			if l.Seq != next {
				conn.Close()
				return delays, reconnects, fmt.Errorf("line %d arrived when %d was due", l.Seq, next)
			}
			delays = append(delays, time.Since(l.Time))
			next++
			continue
		}
		conn.SetReadDeadline(time.Now().Add(2 * time.Minute))
		_, msg, err := conn.ReadMessage()
		if err == nil {
			// One line, or with ?batch=1 an array of them.
			if len(msg) > 0 && msg[0] == '[' {
				err = json.Unmarshal(msg, &batch)
			} else {
				batch = []atoll.LogLine{{}}
				err = json.Unmarshal(msg, &batch[0])
			}
			if err != nil {
				conn.Close()
				return delays, reconnects, fmt.Errorf("message %q: %w", msg, err)
			}
			continue
		}
		switch {
		case websocket.IsCloseError(err, websocket.CloseNormalClosure):
			conn.Close()
			if next != int64(lines)+1 {
				return delays, reconnects, fmt.Errorf("closed after %d lines; want %d", next-1, lines)
			}
			return delays, reconnects, nil
		case err != nil:
			conn.Close()
			if reconnects++; reconnects > 20 {
				return delays, reconnects, fmt.Errorf("after %d lines: %w", next-1, err)
			}
			if conn, _, err = websocket.DefaultDialer.Dial(wsURL(s, job, next)+query, liveAuth()); err != nil {
				return delays, reconnects, fmt.Errorf("reconnect after %d lines: %w", next-1, err)
			}
		}
	}
}

// connectViewers opens n websockets on job from line 1, with query
// ("&batch=1" or "") appended to the URL.
func connectViewers(tb testing.TB, s *liveServer, job int64, n int, query string) []*websocket.Conn {
	conns := make([]*websocket.Conn, n)
	for i := range conns {
		c, _, err := websocket.DefaultDialer.Dial(wsURL(s, job, 1)+query, liveAuth())
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
	s := startLiveServer(t, manyStreams)
	job := runningJob(t, s.DB)
	const lines, size = 2000, 200
	// Half read one line per message, half batches (as live.js does).
	conns := append(connectViewers(t, s, job, 50, ""), connectViewers(t, s, job, 50, "&batch=1")...)
	stalled := connectViewers(t, s, job, 1, "&batch=1")[0]

	var wg sync.WaitGroup
	errs := make([]error, len(conns))
	for i, c := range conns {
		query := ""
		if i >= 50 {
			query = "&batch=1"
		}
		wg.Add(1)
		go func() { defer wg.Done(); _, _, errs[i] = viewer(s, job, c, lines, query) }()
	}
	writeJobLog(t, s, job, lines, size, 0) // while one viewer has read nothing yet
	wg.Wait()
	for i, err := range errs {
		if err != nil {
			t.Errorf("viewer %d: %v", i, err)
		}
	}
	if _, _, err := viewer(s, job, stalled, lines, "&batch=1"); err != nil {
		t.Errorf("the viewer that read late: %v", err)
	}
}

// A log written to 100 viewers on real websockets. "burst": 10 MB (50,000
// lines of 200 bytes) as fast as the store takes them; "steady": 1,000
// lines a second for 10 s, a chatty Terraform. Reported: the delay of each
// line from its publication to its arrival, over every delivery, and how
// often a viewer too slow to keep up was dropped and resumed.
func BenchmarkJobLogFanOut(b *testing.B) {
	const size, viewers = 200, 100
	for _, bc := range []struct {
		name        string
		lines, rate int
	}{{"burst", 50_000, 0}, {"steady", 10_000, 1000}} {
		b.Run(bc.name, func(b *testing.B) {
			for b.Loop() {
				b.StopTimer()
				s := startLiveServer(b, manyStreams)
				job := runningJob(b, s.DB)
				conns := connectViewers(b, s, job, viewers, "&batch=1") // as live.js
				b.StartTimer()
				var wg sync.WaitGroup
				var mu sync.Mutex
				var all []time.Duration
				var reconnects int
				for _, c := range conns {
					wg.Add(1)
					go func() {
						defer wg.Done()
						d, n, err := viewer(s, job, c, bc.lines, "&batch=1")
						if err != nil {
							b.Error(err)
						}
						mu.Lock()
						all, reconnects = append(all, d...), reconnects+n
						mu.Unlock()
					}()
				}
				writeJobLog(b, s, job, bc.lines, size, bc.rate)
				wg.Wait()
				b.StopTimer()
				slices.Sort(all)
				if len(all) > 0 {
					b.ReportMetric(float64(all[len(all)/2].Microseconds())/1000, "p50-ms")
					b.ReportMetric(float64(all[len(all)*99/100].Microseconds())/1000, "p99-ms")
					b.ReportMetric(float64(all[len(all)-1].Microseconds())/1000, "max-ms")
				}
				b.ReportMetric(float64(reconnects), "resumes")
				b.StartTimer()
			}
		})
	}
}

// manyStreams lets the one user of a startLiveServer server hold the
// hundred viewers these tests stand for (a user may hold 32).
func manyStreams(s *web.Server) { s.StreamsPerUser = 1000 }
