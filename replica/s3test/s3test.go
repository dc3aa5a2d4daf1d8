// Package s3test starts an in-process S3 server (gofakes3, in memory) on
// 127.0.0.1 for tests of the replica package and its users.
//
// New sets AWS environment variables with t.Setenv so that Litestream's S3
// client (which reads its keys from the environment) talks to the fake server
// without touching the host's AWS configuration; tests that call it therefore
// cannot use t.Parallel.
package s3test

import (
	"bytes"
	"fmt"
	"net/http"
	"net/http/httptest"
	"net/url"
	"path/filepath"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/johannesboyne/gofakes3"
	"github.com/johannesboyne/gofakes3/backend/s3mem"
	"github.com/superfly/ltx"
)

// Fixed test credentials: gofakes3 does not check signatures, but the AWS
// SDK refuses to sign without keys.
const (
	AccessKeyID     = "atoll-test-key"
	SecretAccessKey = "atoll-test-secret"
	Region          = "us-east-1"
)

// Server is a running fake S3 server holding one bucket.
type Server struct {
	Endpoint string // http://127.0.0.1:PORT
	Bucket   string

	ltxDelay atomic.Int64 // see DelayLTXAnswers
}

// DelayLTXAnswers holds the answer to every LTX file upload for d after the
// file is stored (0: answer at once), or until the client gives up: the
// replica has the file, the uploader does not know it. This is a sync that
// times out at the last moment, as on a loaded machine or a slow network.
func (s *Server) DelayLTXAnswers(d time.Duration) { s.ltxDelay.Store(int64(d)) }

// handler is gofakes3's, with DelayLTXAnswers.
func (s *Server) handler(next http.Handler) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		d := time.Duration(s.ltxDelay.Load())
		if d <= 0 || r.Method != http.MethodPut || !strings.HasSuffix(r.URL.Path, ".ltx") {
			next.ServeHTTP(w, r)
			return
		}
		rec := httptest.NewRecorder()
		next.ServeHTTP(rec, r)
		t := time.NewTimer(d)
		defer t.Stop()
		select {
		case <-t.C:
		case <-r.Context().Done():
			return
		}
		for k, v := range rec.Header() {
			w.Header()[k] = v
		}
		w.WriteHeader(rec.Code)
		w.Write(rec.Body.Bytes())
	})
}

// New starts a fake S3 server with an empty bucket and stops it when the test
// ends. It also points the AWS SDK at fixed keys and away from the host's
// configuration (AWS_CA_BUNDLE cleared, no shared config, no instance metadata).
func New(t testing.TB) *Server {
	t.Helper()

	backend := s3mem.New()
	const bucket = "atoll-test"
	if err := backend.CreateBucket(bucket); err != nil {
		t.Fatalf("s3test: create bucket: %v", err)
	}
	srv := &Server{Bucket: bucket}
	ts := httptest.NewServer(srv.handler(gofakes3.New(backend).Server()))
	t.Cleanup(ts.Close)
	srv.Endpoint = ts.URL

	dir := t.TempDir()
	for k, v := range map[string]string{
		"AWS_ACCESS_KEY_ID":           AccessKeyID,
		"AWS_SECRET_ACCESS_KEY":       SecretAccessKey,
		"AWS_SESSION_TOKEN":           "",
		"AWS_REGION":                  Region,
		"AWS_PROFILE":                 "",
		"AWS_CA_BUNDLE":               "",
		"AWS_EC2_METADATA_DISABLED":   "true",
		"AWS_CONFIG_FILE":             filepath.Join(dir, "aws-config-absent"),
		"AWS_SHARED_CREDENTIALS_FILE": filepath.Join(dir, "aws-credentials-absent"),
		"LITESTREAM_S3_ENDPOINT":      "",
	} {
		t.Setenv(k, v)
	}

	return srv
}

// URL returns the Litestream replica URL of path inside the server's bucket:
// s3://BUCKET/PATH?endpoint=…&region=us-east-1&forcePathStyle=true.
func (s *Server) URL(path string) string {
	q := url.Values{}
	q.Set("endpoint", s.Endpoint)
	q.Set("region", Region)
	q.Set("forcePathStyle", "true")
	return fmt.Sprintf("s3://%s/%s?%s", s.Bucket, strings.TrimPrefix(path, "/"), q.Encode())
}

// LTXFile is a minimal valid LTX file of one page at txid, for tests that
// upload to a replica.
func LTXFile(t testing.TB, txid ltx.TXID) []byte {
	t.Helper()
	var buf bytes.Buffer
	enc, err := ltx.NewEncoder(&buf)
	if err != nil {
		t.Fatal(err)
	}
	hdr := ltx.Header{Version: ltx.Version, PageSize: 512, Commit: 1, MinTXID: txid, MaxTXID: txid, Timestamp: time.Now().UnixMilli()}
	if txid > 1 {
		hdr.PreApplyChecksum = ltx.ChecksumFlag
	}
	if err := enc.EncodeHeader(hdr); err != nil {
		t.Fatal(err)
	}
	if err := enc.EncodePage(ltx.PageHeader{Pgno: 1}, make([]byte, 512)); err != nil {
		t.Fatal(err)
	}
	enc.SetPostApplyChecksum(ltx.ChecksumFlag)
	if err := enc.Close(); err != nil {
		t.Fatal(err)
	}
	return buf.Bytes()
}
