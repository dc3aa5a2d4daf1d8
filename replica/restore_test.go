package replica_test

import (
	"context"
	"errors"
	"io"
	"os"
	"path/filepath"
	"sync/atomic"
	"testing"
	"time"

	"github.com/benbjohnson/litestream"
	"github.com/superfly/ltx"

	"github.com/atollhq/atoll"
	"github.com/atollhq/atoll/replica"
)

func TestRestore(t *testing.T) {
	ctx := context.Background()
	tg := targets(t)[0]
	empty := filepath.Join(t.TempDir(), "x.db")
	if err := replica.Restore(ctx, tg.client(), empty, false); atoll.ErrorCode(err) != atoll.ENOTFOUND {
		t.Fatalf("restore of an empty replica: %v, want ENOTFOUND", err)
	}
	if _, err := os.Stat(empty); !errors.Is(err, os.ErrNotExist) {
		t.Fatalf("a failed restore left %s", empty)
	}

	a := openActive(t, filepath.Join(t.TempDir(), "atoll.db"), tg.client())
	a.write(t, "a")

	// An existing database is refused and left alone.
	path := filepath.Join(t.TempDir(), "restore.db")
	old := openActive(t, path, file0(t))
	old.write(t, "old")
	old.close(t)
	if err := replica.Restore(ctx, tg.client(), path, false); atoll.ErrorCode(err) != atoll.ECONFLICT {
		t.Fatalf("restore over an existing file: %v, want ECONFLICT", err)
	}
	if got := actions(t, path); !got["old"] || got["a"] {
		t.Fatalf("the refused restore changed the file: %v", got)
	}

	// Asked to, it replaces the database and everything that described it:
	// a leftover WAL would be applied to the new file.
	if err := os.WriteFile(path+"-wal", []byte("not a WAL of the restored database"), 0o600); err != nil {
		t.Fatal(err)
	}
	if err := replica.Restore(ctx, tg.client(), path, true); err != nil {
		t.Fatal(err)
	}
	for _, p := range []string{path + "-wal", filepath.Join(filepath.Dir(path), ".restore.db-litestream")} {
		if _, err := os.Stat(p); !errors.Is(err, os.ErrNotExist) {
			t.Errorf("%s survived the restore", p)
		}
	}
	if got := actions(t, path); got["old"] || !got["a"] {
		t.Fatalf("after restore with overwrite: %v, want the replica's", got)
	}
	txid, follower, err := replica.LocalTXID(path)
	if err != nil || !follower || txid == 0 {
		t.Errorf("restored position = %s, %v, %v", txid, follower, err)
	}
}

// file0 is a replica of its own, for databases whose replica does not matter.
func file0(t testing.TB) litestream.ReplicaClient {
	return targets(t)[0].client()
}

func isCurrent(t testing.TB, client litestream.ReplicaClient, path string) bool {
	t.Helper()
	ok, err := replica.IsCurrent(context.Background(), client, path)
	if err != nil {
		t.Fatal(err)
	}
	return ok
}

// A copy taken before more writes is stale; once restored again it is
// current.
func TestIsCurrentFollowerCopy(t *testing.T) {
	for _, tg := range targets(t) {
		t.Run(tg.name, func(t *testing.T) {
			ctx := context.Background()
			a := openActive(t, filepath.Join(t.TempDir(), "atoll.db"), tg.client())
			a.write(t, "a")
			copyPath := filepath.Join(t.TempDir(), "standby.db")
			f := replica.NewFollower(tg.client(), copyPath, 0)
			f.Logger = quiet()
			if err := f.Start(ctx); err != nil {
				t.Fatal(err)
			}
			catchUp(t, f)
			if err := f.Stop(ctx); err != nil {
				t.Fatal(err)
			}
			if !isCurrent(t, tg.client(), copyPath) {
				t.Fatal("a caught-up copy is not current")
			}

			a.write(t, "b")
			if isCurrent(t, tg.client(), copyPath) {
				t.Fatal("a copy taken before the last write is reported current")
			}
			if err := replica.Restore(ctx, tg.client(), copyPath, true); err != nil {
				t.Fatal(err)
			}
			if !isCurrent(t, tg.client(), copyPath) || !actions(t, copyPath)["b"] {
				t.Fatal("a copy restored again is not current")
			}
			if isCurrent(t, tg.client(), filepath.Join(t.TempDir(), "none.db")) {
				t.Error("no database at all is reported current")
			}
		})
	}
}

// A database this node replicated itself is current until another node
// writes to the replica.
func TestIsCurrentFormerActive(t *testing.T) {
	tg := targets(t)[1]
	pathA := filepath.Join(t.TempDir(), "a.db")
	a := openActive(t, pathA, tg.client())
	a.write(t, "a")
	a.close(t)
	if !isCurrent(t, tg.client(), pathA) {
		t.Fatal("the last active node's database is not current")
	}

	// B takes over from a restored copy and writes.
	pathB := filepath.Join(t.TempDir(), "b.db")
	if err := replica.Restore(context.Background(), tg.client(), pathB, false); err != nil {
		t.Fatal(err)
	}
	b := openActive(t, pathB, tg.client())
	b.write(t, "b")
	if isCurrent(t, tg.client(), pathA) {
		t.Fatal("A's database is reported current after B wrote")
	}
	if !isCurrent(t, tg.client(), pathB) {
		t.Fatal("B's database is not current")
	}
}

// fenced refuses to change the replica while fence is set, as a node whose
// lease has ended must.
type fenced struct {
	litestream.ReplicaClient
	fence atomic.Bool
}

var errFenced = errors.New("fenced")

func (c *fenced) WriteLTXFile(ctx context.Context, level int, minTXID, maxTXID ltx.TXID, r io.Reader) (*ltx.FileInfo, error) {
	if c.fence.Load() {
		return nil, errFenced
	}
	return c.ReplicaClient.WriteLTXFile(ctx, level, minTXID, maxTXID, r)
}

func (c *fenced) DeleteLTXFiles(ctx context.Context, a []*ltx.FileInfo) error {
	if c.fence.Load() {
		return errFenced
	}
	return c.ReplicaClient.DeleteLTXFiles(ctx, a)
}

// Equal TXIDs are not enough: A, cut off, made an LTX file the replica never
// got; B was promoted and wrote the same TXID. A must not count as current.
func TestIsCurrentDivergedAtSameTXID(t *testing.T) {
	ctx := context.Background()
	tg := targets(t)[1]
	pathA := filepath.Join(t.TempDir(), "a.db")
	clientA := &fenced{ReplicaClient: tg.client()}
	a := openActive(t, pathA, clientA)
	a.write(t, "a")
	clientA.fence.Store(true)
	a.replicaDown = true
	if err := a.db.Update(ctx, markEvent("lost")); atoll.ErrorCode(err) != atoll.EUNAVAILABLE {
		t.Fatalf("write while fenced: %v", err)
	}
	a.close(t)
	localA, _, err := replica.LocalTXID(pathA)
	if err != nil {
		t.Fatal(err)
	}

	pathB := filepath.Join(t.TempDir(), "b.db")
	if err := replica.Restore(ctx, tg.client(), pathB, false); err != nil {
		t.Fatal(err)
	}
	b := openActive(t, pathB, tg.client()) // its first sync uploads a snapshot
	remote, err := replica.MaxTXID(ctx, tg.client())
	if err != nil {
		t.Fatal(err)
	}
	if localA < remote {
		t.Fatalf("test setup: A at %s is behind the replica at %s: not the case under test", localA, remote)
	}
	t.Logf("A's local TXID %s, replica's %s (B's)", localA, remote)
	if isCurrent(t, tg.client(), pathA) {
		t.Fatal("A's diverged database is reported current")
	}
	if !isCurrent(t, tg.client(), pathB) {
		t.Fatal("B's database is not current")
	}
	b.close(t)
}

// The promotion path: the standby's copy is current, it is opened for
// writing and replicated; a follower that was running carries on across the
// change of writer, and nothing acknowledged is lost.
func TestPromotedFollowerContinuesTheReplica(t *testing.T) {
	ctx := context.Background()
	tg := targets(t)[1]
	a := openActive(t, filepath.Join(t.TempDir(), "a.db"), tg.client())
	a.write(t, "a")

	pathB := filepath.Join(t.TempDir(), "b.db")
	fb := replica.NewFollower(tg.client(), pathB, 0)
	fb.Logger = quiet()
	pathC := filepath.Join(t.TempDir(), "c.db")
	fc := replica.NewFollower(tg.client(), pathC, 0)
	fc.Logger = quiet()
	for _, f := range []*replica.Follower{fb, fc} {
		if err := f.Start(ctx); err != nil {
			t.Fatal(err)
		}
		t.Cleanup(func() { f.Stop(context.Background()) })
	}
	a.write(t, "a2")
	a.close(t) // the active node dies

	catchUp(t, fb)
	if err := fb.Stop(ctx); err != nil {
		t.Fatal(err)
	}
	if !isCurrent(t, tg.client(), pathB) {
		t.Fatal("B's caught-up copy is not current")
	}
	b := openActive(t, pathB, tg.client())
	b.write(t, "b")

	for _, got := range []map[string]bool{restored(t, tg.client())} {
		if !got["a"] || !got["a2"] || !got["b"] {
			t.Fatalf("replica after promotion: %v", got)
		}
	}
	ro := openStandbyReader(t, pathC)
	eventually(t, 10*time.Second, "C follows B's writes", func() (bool, error) {
		got, err := queryActions(ro)
		return got["a"] && got["a2"] && got["b"], err
	})
}
