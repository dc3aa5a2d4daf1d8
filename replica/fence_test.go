package replica_test

import (
	"bytes"
	"context"
	"errors"
	"io"
	"path/filepath"
	"testing"
	"time"

	"github.com/benbjohnson/litestream"
	"github.com/superfly/ltx"

	"github.com/atollhq/atoll/replica"
	"github.com/atollhq/atoll/replica/s3test"
)

// fenceReplicas returns a fresh, initialised replica client per
// implementation: a directory and a bucket on a real in-process S3 server.
func fenceReplicas() []struct {
	name string
	new  func(t *testing.T) litestream.ReplicaClient
} {
	open := func(t *testing.T, url string) litestream.ReplicaClient {
		t.Helper()
		c, err := replica.ParseURL(url)
		if err != nil {
			t.Fatal(err)
		}
		if err := c.Init(context.Background()); err != nil {
			t.Fatal(err)
		}
		return c
	}
	return []struct {
		name string
		new  func(t *testing.T) litestream.ReplicaClient
	}{
		{"file", func(t *testing.T) litestream.ReplicaClient {
			return open(t, "file://"+filepath.Join(t.TempDir(), "replica"))
		}},
		{"s3", func(t *testing.T) litestream.ReplicaClient {
			t.Setenv("AWS_CA_BUNDLE", "")
			return open(t, s3test.New(t).URL("atoll/db"))
		}},
	}
}

func fenceList(t *testing.T, c litestream.ReplicaClient) []*ltx.FileInfo {
	t.Helper()
	infos, err := litestream.FindLTXFiles(context.Background(), c, 0, false, func(*ltx.FileInfo) (bool, error) { return true, nil })
	if err != nil {
		t.Fatalf("list: %v", err)
	}
	return infos
}

func TestFencedClientRefusesWritesAfterDeadline(t *testing.T) {
	for _, r := range fenceReplicas() {
		t.Run(r.name, func(t *testing.T) {
			ctx := context.Background()
			inner := r.new(t)
			clock := newLeaseClock()
			deadline := leaseT0.Add(10 * time.Second)
			fc := replica.NewFencedClient(inner, func() time.Time { return deadline })
			fc.Now = clock.Now

			clock.Set(deadline.Add(-5 * time.Second))
			written := s3test.LTXFile(t, 1)
			if _, err := fc.WriteLTXFile(ctx, 0, 1, 1, bytes.NewReader(written)); err != nil {
				t.Fatalf("write before the deadline: %v", err)
			}

			clock.Set(deadline)
			if _, err := fc.WriteLTXFile(ctx, 0, 2, 2, bytes.NewReader(s3test.LTXFile(t, 2))); !errors.Is(err, replica.ErrFenced) {
				t.Fatalf("write at the deadline: err = %v, want ErrFenced", err)
			}
			infos := fenceList(t, fc) // reads pass through
			if len(infos) != 1 || infos[0].MaxTXID != 1 {
				t.Fatalf("replica holds %+v, want only TXID 1", infos)
			}
			if err := fc.DeleteLTXFiles(ctx, infos); !errors.Is(err, replica.ErrFenced) {
				t.Fatalf("delete after the deadline: err = %v, want ErrFenced", err)
			}
			if err := fc.DeleteAll(ctx); !errors.Is(err, replica.ErrFenced) {
				t.Fatalf("delete all after the deadline: err = %v, want ErrFenced", err)
			}
			if got := fenceList(t, inner); len(got) != 1 {
				t.Fatalf("fenced deletes reached the replica: %+v", got)
			}

			rc, err := fc.OpenLTXFile(ctx, 0, 1, 1, 0, 0)
			if err != nil {
				t.Fatalf("read after the deadline: %v", err)
			}
			defer rc.Close()
			if data, err := io.ReadAll(rc); err != nil || !bytes.Equal(data, written) {
				t.Fatalf("read back %d bytes (%v), want the %d written", len(data), err, len(written))
			}
		})
	}
}

// Without a deadline (no lease, or not yet acquired) nothing may be written.
func TestFencedClientWithoutDeadline(t *testing.T) {
	inner := fenceReplicas()[0].new(t)
	for name, deadline := range map[string]func() time.Time{
		"nil":  nil,
		"zero": func() time.Time { return time.Time{} },
	} {
		fc := replica.NewFencedClient(inner, deadline)
		if _, err := fc.WriteLTXFile(context.Background(), 0, 1, 1, bytes.NewReader(s3test.LTXFile(t, 1))); !errors.Is(err, replica.ErrFenced) {
			t.Errorf("%s deadline: err = %v, want ErrFenced", name, err)
		}
	}
}

// A process frozen past its deadline (SIGSTOP, VM pause) must notice on
// resume, before it writes: the check reads the real clock at each call.
func TestFencedClientAfterPause(t *testing.T) {
	inner := fenceReplicas()[0].new(t)
	deadline := time.Now().Add(50 * time.Millisecond)
	fc := replica.NewFencedClient(inner, func() time.Time { return deadline })
	time.Sleep(100 * time.Millisecond) // the "freeze"
	if _, err := fc.WriteLTXFile(context.Background(), 0, 1, 1, bytes.NewReader(s3test.LTXFile(t, 1))); !errors.Is(err, replica.ErrFenced) {
		t.Fatalf("write after the pause: err = %v, want ErrFenced", err)
	}
	if got := fenceList(t, inner); len(got) != 0 {
		t.Fatalf("fenced write reached the replica: %+v", got)
	}
}

// The deadline follows the holder's lease: writes stop when the lease
// deadline passes and resume after a successful renewal.
func TestFencedClientFollowsLease(t *testing.T) {
	for _, s := range leaseStores() {
		t.Run(s.name, func(t *testing.T) {
			ctx := context.Background()
			store := s.new(t)
			clock := newLeaseClock()
			leaser := store.node(t, clock.Now)
			lease := mustAcquire(t, leaser, "node-a")

			client, err := replica.ParseURL(store.url)
			if err != nil {
				t.Fatal(err)
			}
			if err := client.Init(ctx); err != nil {
				t.Fatal(err)
			}
			const margin = 3 * time.Second
			fc := replica.NewFencedClient(client, func() time.Time { return lease.Deadline(margin) })
			fc.Now = clock.Now

			clock.Set(leaseT0.Add(leaseTTL - margin)) // the lease itself has 3s left
			if _, err := fc.WriteLTXFile(ctx, 0, 1, 1, bytes.NewReader(s3test.LTXFile(t, 1))); !errors.Is(err, replica.ErrFenced) {
				t.Fatalf("write within the safety margin: err = %v, want ErrFenced", err)
			}
			if lease, err = leaser.Renew(ctx, lease, leaseTTL); err != nil {
				t.Fatal(err)
			}
			if _, err := fc.WriteLTXFile(ctx, 0, 1, 1, bytes.NewReader(s3test.LTXFile(t, 1))); err != nil {
				t.Fatalf("write after renewal: %v", err)
			}
		})
	}
}

// slowReader delays its first Read, like an upload that stalls.
type slowReader struct {
	r     io.Reader
	delay time.Duration
}

func (s *slowReader) Read(p []byte) (int, error) {
	if s.delay > 0 {
		time.Sleep(s.delay)
		s.delay = 0
	}
	return s.r.Read(p)
}

// An upload still in flight at the deadline is abandoned, not finished late:
// the call's context ends at the deadline.
func TestFencedClientAbandonsUploadAtDeadline(t *testing.T) {
	inner := fenceReplicas()[1].new(t) // S3: its upload honours the context
	deadline := time.Now().Add(300 * time.Millisecond)
	fc := replica.NewFencedClient(inner, func() time.Time { return deadline })
	body := &slowReader{r: bytes.NewReader(s3test.LTXFile(t, 1)), delay: 600 * time.Millisecond}
	if _, err := fc.WriteLTXFile(context.Background(), 0, 1, 1, body); !errors.Is(err, context.DeadlineExceeded) {
		t.Fatalf("stalled upload: err = %v, want context.DeadlineExceeded", err)
	}
	if got := fenceList(t, inner); len(got) != 0 {
		t.Fatalf("late upload reached the replica: %+v", got)
	}
}
