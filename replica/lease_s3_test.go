package replica_test

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"net/http"
	"net/http/httptest"
	"net/http/httputil"
	"net/url"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/credentials"
	"github.com/aws/aws-sdk-go-v2/service/s3"
	"github.com/benbjohnson/litestream"
	lss3 "github.com/benbjohnson/litestream/s3"

	"github.com/atollhq/atoll/replica"
	"github.com/atollhq/atoll/replica/s3test"
)

// The S3 lease is the object <path>/lock.json, written in place (never
// deleted) so that a release keeps the generation, and in the format of
// Litestream's own s3.Leaser, which therefore sees it as held.
func TestS3LeaseObject(t *testing.T) {
	t.Setenv("AWS_CA_BUNDLE", "")
	srv := s3test.New(t)
	ctx := context.Background()
	l, err := replica.NewLeaserFromURL(srv.URL("atoll/db"))
	if err != nil {
		t.Fatal(err)
	}
	api := s3.New(s3.Options{
		BaseEndpoint: aws.String(srv.Endpoint),
		Region:       s3test.Region,
		UsePathStyle: true,
		Credentials:  credentials.NewStaticCredentialsProvider(s3test.AccessKeyID, s3test.SecretAccessKey, ""),
	})
	readObject := func() (doc struct {
		Generation int64  `json:"generation"`
		Owner      string `json:"owner"`
	}) {
		t.Helper()
		out, err := api.GetObject(ctx, &s3.GetObjectInput{Bucket: aws.String(srv.Bucket), Key: aws.String("atoll/db/lock.json")})
		if err != nil {
			t.Fatalf("get atoll/db/lock.json: %v", err)
		}
		defer out.Body.Close()
		if err := json.NewDecoder(out.Body).Decode(&doc); err != nil {
			t.Fatal(err)
		}
		return doc
	}

	lease, err := l.Acquire(ctx, "node-a", "http://node-a:4141", time.Minute)
	if err != nil {
		t.Fatal(err)
	}
	if doc := readObject(); doc.Generation != 1 || doc.Owner != "node-a" {
		t.Fatalf("lock.json = %+v", doc)
	}

	theirs := lss3.NewLeaser()
	theirs.SetClient(api)
	theirs.Bucket, theirs.Path, theirs.Owner = srv.Bucket, "atoll/db", "litestream"
	var exists *litestream.LeaseExistsError
	if _, err := theirs.AcquireLease(ctx); !errors.As(err, &exists) || exists.Owner != "node-a" {
		t.Fatalf("Litestream's leaser: err = %v, want lease held by node-a", err)
	}

	if err := l.Release(ctx, lease); err != nil {
		t.Fatal(err)
	}
	if doc := readObject(); doc.Generation != 1 || doc.Owner != "" {
		t.Fatalf("lock.json after release = %+v, want generation 1 kept and no owner", doc)
	}
}

// dropFirstLeaseResponse forwards requests to the S3 server but, once armed,
// cuts the connection after the server has applied the next PUT of
// lock.json, before its response: a write that landed but looks failed.
type dropFirstLeaseResponse struct {
	proxy http.Handler
	armed atomic.Bool
}

func (d *dropFirstLeaseResponse) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	if r.Method != http.MethodPut || !strings.HasSuffix(r.URL.Path, "/lock.json") || !d.armed.CompareAndSwap(true, false) {
		d.proxy.ServeHTTP(w, r)
		return
	}
	d.proxy.ServeHTTP(httptest.NewRecorder(), r) // applied, response discarded
	conn, _, err := http.NewResponseController(w).Hijack()
	if err != nil {
		panic(err)
	}
	conn.Close()
}

// When the response to a lease write is lost and the SDK retries, the retry
// fails its condition against our own write; that must count as success.
func TestS3LeaseLostResponse(t *testing.T) {
	t.Setenv("AWS_CA_BUNDLE", "")
	srv := s3test.New(t)
	target, err := url.Parse(srv.Endpoint)
	if err != nil {
		t.Fatal(err)
	}
	drop := &dropFirstLeaseResponse{proxy: httputil.NewSingleHostReverseProxy(target)}
	proxy := httptest.NewServer(drop)
	t.Cleanup(proxy.Close)
	raw := fmt.Sprintf("s3://%s/atoll/db?endpoint=%s&region=%s&forcePathStyle=true", srv.Bucket, proxy.URL, s3test.Region)

	ctx := context.Background()
	l, err := replica.NewLeaserFromURL(raw)
	if err != nil {
		t.Fatal(err)
	}
	drop.armed.Store(true)
	lease, err := l.Acquire(ctx, "node-a", "http://node-a:4141", time.Minute)
	if err != nil {
		t.Fatalf("Acquire with a lost response: %v", err)
	}
	if drop.armed.Load() {
		t.Fatal("no response was dropped")
	}
	drop.armed.Store(true)
	if lease, err = l.Renew(ctx, lease, time.Minute); err != nil {
		t.Fatalf("Renew with a lost response: %v", err)
	}
	if lease, err = l.Renew(ctx, lease, time.Minute); err != nil {
		t.Fatalf("Renew after it: %v", err)
	}
	if lease.Generation != 1 {
		t.Fatalf("generation %d, want 1", lease.Generation)
	}
}
