package replica

import (
	"context"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"time"

	"github.com/benbjohnson/litestream"
	"github.com/superfly/ltx"
)

// ErrFenced is returned by a FencedClient's writes once its deadline passed:
// this node may no longer hold the lease, so it must not touch the replica.
var ErrFenced = errors.New("replica writes fenced: lease deadline passed")

// FencedClient is a replica client that refuses writes (WriteLTXFile,
// DeleteLTXFiles, DeleteAll) once Deadline has passed; reads pass through.
// The check runs immediately before each call, against the clock, so a
// process frozen (SIGSTOP, VM pause) past its deadline notices on resume
// before it uploads anything, and the call's context ends at the deadline.
type FencedClient struct {
	Client litestream.ReplicaClient
	// Deadline returns the instant until which writes are allowed, typically
	// the current lease's Deadline(margin); the zero time fences everything.
	Deadline func() time.Time
	// Now is the clock; nil means time.Now.
	Now func() time.Time
}

var _ litestream.ReplicaClient = (*FencedClient)(nil)

// NewFencedClient wraps client so that its writes stop at deadline().
func NewFencedClient(client litestream.ReplicaClient, deadline func() time.Time) *FencedClient {
	return &FencedClient{Client: client, Deadline: deadline}
}

// Check returns a wrapped ErrFenced once the deadline has passed.
func (c *FencedClient) Check(op string) error {
	_, err := c.left(op)
	return err
}

// check returns a wrapped ErrFenced unless the deadline is still ahead;
// otherwise ctx is limited to the time left, so that an upload still in
// flight at the deadline is abandoned rather than finished late.
func (c *FencedClient) check(ctx context.Context, op string) (context.Context, context.CancelFunc, error) {
	left, err := c.left(op)
	if err != nil {
		return nil, nil, err
	}
	ctx, cancel := context.WithTimeout(ctx, left)
	return ctx, cancel, nil
}

// left is the time until the deadline, or a wrapped ErrFenced.
func (c *FencedClient) left(op string) (time.Duration, error) {
	var deadline time.Time
	if c.Deadline != nil {
		deadline = c.Deadline()
	}
	now := time.Now()
	if c.Now != nil {
		now = c.Now()
	}
	// Fenced if either the monotonic or the wall clock says the deadline
	// passed: the lease's expiry is wall-clock time shared with other nodes.
	if !now.Before(deadline) || !now.Round(0).Before(deadline.Round(0)) {
		return 0, fmt.Errorf("%s: %w (deadline %s, now %s)", op, ErrFenced,
			deadline.Round(0).Format(time.RFC3339Nano), now.Round(0).Format(time.RFC3339Nano))
	}
	return min(deadline.Sub(now), deadline.Round(0).Sub(now.Round(0))), nil
}

func (c *FencedClient) Type() string { return c.Client.Type() }

func (c *FencedClient) Init(ctx context.Context) error { return c.Client.Init(ctx) }

func (c *FencedClient) LTXFiles(ctx context.Context, level int, seek ltx.TXID, useMetadata bool) (ltx.FileIterator, error) {
	return c.Client.LTXFiles(ctx, level, seek, useMetadata)
}

func (c *FencedClient) OpenLTXFile(ctx context.Context, level int, minTXID, maxTXID ltx.TXID, offset, size int64) (io.ReadCloser, error) {
	return c.Client.OpenLTXFile(ctx, level, minTXID, maxTXID, offset, size)
}

func (c *FencedClient) WriteLTXFile(ctx context.Context, level int, minTXID, maxTXID ltx.TXID, r io.Reader) (*ltx.FileInfo, error) {
	ctx, cancel, err := c.check(ctx, fmt.Sprintf("write ltx file level %d %s-%s", level, minTXID, maxTXID))
	if err != nil {
		return nil, err
	}
	defer cancel()
	return c.Client.WriteLTXFile(ctx, level, minTXID, maxTXID, r)
}

func (c *FencedClient) DeleteLTXFiles(ctx context.Context, a []*ltx.FileInfo) error {
	ctx, cancel, err := c.check(ctx, fmt.Sprintf("delete %d ltx files", len(a)))
	if err != nil {
		return err
	}
	defer cancel()
	return c.Client.DeleteLTXFiles(ctx, a)
}

func (c *FencedClient) DeleteAll(ctx context.Context) error {
	ctx, cancel, err := c.check(ctx, "delete all")
	if err != nil {
		return err
	}
	defer cancel()
	return c.Client.DeleteAll(ctx)
}

func (c *FencedClient) SetLogger(logger *slog.Logger) { c.Client.SetLogger(logger) }
