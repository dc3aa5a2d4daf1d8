package replica

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"strconv"
	"syscall"
	"time"
)

// FileLeaser keeps the lease of a file:// replica in <Dir>/lock.json. Writes
// compare-and-swap a version counter under an flock on <Dir>/lock.json.lk and
// replace the file by rename, so readers never see a partial lease. It is
// meant for nodes sharing a local or network file system that honours flock.
type FileLeaser struct {
	Dir string
	// Now is the clock for expiry; nil means time.Now.
	Now func() time.Time
}

var _ Leaser = (*FileLeaser)(nil)

// NewFileLeaser returns the leaser of the file replica in dir.
func NewFileLeaser(dir string) *FileLeaser { return &FileLeaser{Dir: dir} }

func (f *FileLeaser) core() *leaser { return &leaser{store: fileStore{dir: f.Dir}, now: f.Now} }

func (f *FileLeaser) Acquire(ctx context.Context, owner, advertiseURL string, ttl time.Duration) (*Lease, error) {
	return f.core().Acquire(ctx, owner, advertiseURL, ttl)
}

func (f *FileLeaser) Renew(ctx context.Context, l *Lease, ttl time.Duration) (*Lease, error) {
	return f.core().Renew(ctx, l, ttl)
}

func (f *FileLeaser) Release(ctx context.Context, l *Lease) error { return f.core().Release(ctx, l) }

func (f *FileLeaser) Current(ctx context.Context) (*Lease, error) { return f.core().Current(ctx) }

type fileStore struct{ dir string }

// fileRecord is the content of lock.json: the lease and its version counter.
type fileRecord struct {
	record
	Version int64 `json:"version"`
}

func (s fileStore) path() string  { return filepath.Join(s.dir, LeaseFile) }
func (s fileStore) where() string { return s.path() }

func (s fileStore) read(ctx context.Context) (*record, string, error) {
	if err := ctx.Err(); err != nil {
		return nil, "", err
	}
	data, err := os.ReadFile(s.path())
	if errors.Is(err, fs.ErrNotExist) {
		return nil, "", nil
	} else if err != nil {
		return nil, "", err
	}
	var fr fileRecord
	if err := json.Unmarshal(data, &fr); err != nil {
		return nil, "", fmt.Errorf("decode %s: %w", s.path(), err)
	}
	return &fr.record, strconv.FormatInt(fr.Version, 10), nil
}

func (s fileStore) write(ctx context.Context, r *record, ifVersion string) (string, error) {
	if err := ctx.Err(); err != nil {
		return "", err
	}
	if err := os.MkdirAll(s.dir, 0o755); err != nil {
		return "", err
	}
	lk, err := os.OpenFile(s.path()+".lk", os.O_RDWR|os.O_CREATE, 0o644)
	if err != nil {
		return "", err
	}
	defer lk.Close() // closing drops the flock
	if err := flock(lk); err != nil {
		return "", fmt.Errorf("lock %s: %w", lk.Name(), err)
	}

	_, version, err := s.read(ctx)
	if err != nil {
		return "", err
	}
	if version != ifVersion {
		return "", errConflict
	}
	var n int64
	if version != "" {
		if n, err = strconv.ParseInt(version, 10, 64); err != nil {
			return "", fmt.Errorf("version of %s: %w", s.path(), err)
		}
	}
	data, err := json.Marshal(fileRecord{record: *r, Version: n + 1})
	if err != nil {
		return "", err
	}
	if err := writeFileAtomic(s.path(), data); err != nil {
		return "", err
	}
	return strconv.FormatInt(n+1, 10), nil
}

func flock(f *os.File) error {
	for {
		err := syscall.Flock(int(f.Fd()), syscall.LOCK_EX)
		if !errors.Is(err, syscall.EINTR) {
			return err
		}
	}
}

// writeFileAtomic replaces path with data durably: temp file, fsync, rename,
// fsync of the directory.
func writeFileAtomic(path string, data []byte) error {
	dir := filepath.Dir(path)
	tmp, err := os.CreateTemp(dir, filepath.Base(path)+".tmp-*")
	if err != nil {
		return err
	}
	defer os.Remove(tmp.Name()) // no-op once renamed
	if _, err := tmp.Write(data); err != nil {
		tmp.Close()
		return err
	}
	if err := tmp.Sync(); err != nil {
		tmp.Close()
		return err
	}
	if err := tmp.Close(); err != nil {
		return err
	}
	if err := os.Chmod(tmp.Name(), 0o644); err != nil {
		return err
	}
	if err := os.Rename(tmp.Name(), path); err != nil {
		return err
	}
	d, err := os.Open(dir)
	if err != nil {
		return err
	}
	defer d.Close()
	return d.Sync()
}
