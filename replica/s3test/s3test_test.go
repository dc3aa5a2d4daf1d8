package s3test_test

import (
	"bytes"
	"context"
	"io"
	"testing"

	"github.com/benbjohnson/litestream"
	_ "github.com/benbjohnson/litestream/s3" // registers the s3:// scheme
	"github.com/superfly/ltx"

	"github.com/atollhq/atoll/replica/s3test"
)

// TestServerRoundTrip checks that Litestream's own S3 client, built from the
// URL the helper returns, can write, list and read back a file.
func TestServerRoundTrip(t *testing.T) {
	srv := s3test.New(t)
	ctx := context.Background()

	client, err := litestream.NewReplicaClientFromURL(srv.URL("db"))
	if err != nil {
		t.Fatalf("client from url: %v", err)
	}
	if err := client.Init(ctx); err != nil {
		t.Fatalf("init: %v", err)
	}

	body := s3test.LTXFile(t, 1)
	if _, err := client.WriteLTXFile(ctx, 0, 1, 1, bytes.NewReader(body)); err != nil {
		t.Fatalf("write: %v", err)
	}

	infos, err := litestream.FindLTXFiles(ctx, client, 0, false, func(*ltx.FileInfo) (bool, error) { return true, nil })
	if err != nil {
		t.Fatalf("list: %v", err)
	}
	if len(infos) != 1 || infos[0].MinTXID != 1 || infos[0].MaxTXID != 1 {
		t.Fatalf("listed %+v, want one file for TXID 1", infos)
	}

	rc, err := client.OpenLTXFile(ctx, 0, 1, 1, 0, 0)
	if err != nil {
		t.Fatalf("open: %v", err)
	}
	defer rc.Close()
	got, err := io.ReadAll(rc)
	if err != nil {
		t.Fatalf("read: %v", err)
	}
	if !bytes.Equal(got, body) {
		t.Fatalf("read back %q, want %q", got, body)
	}
}
