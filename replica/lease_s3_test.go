package replica_test

import (
	"context"
	"encoding/json"
	"errors"
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
