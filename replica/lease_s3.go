package replica

import (
	"bytes"
	"context"
	"crypto/tls"
	"encoding/json"
	"errors"
	"fmt"
	"net/http"
	"path"
	"strings"
	"sync"
	"time"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/config"
	"github.com/aws/aws-sdk-go-v2/credentials"
	"github.com/aws/aws-sdk-go-v2/feature/s3/manager"
	"github.com/aws/aws-sdk-go-v2/service/s3"
	"github.com/aws/aws-sdk-go-v2/service/s3/types"
	"github.com/aws/smithy-go"
	"github.com/aws/smithy-go/middleware"
	smithyhttp "github.com/aws/smithy-go/transport/http"
	"github.com/benbjohnson/litestream"
	lss3 "github.com/benbjohnson/litestream/s3"
)

// S3Leaser keeps the lease of an s3:// replica in <path>/lock.json with
// conditional PUTs: If-None-Match: * to create it, If-Match: <ETag> to renew,
// take over or release it. It never deletes the object, so the generation
// survives releases, and needs no conditional DELETE.
//
// Litestream's s3.Leaser uses the same key and protocol but does not fit:
// its lease has no advertise URL, its release deletes the object (resetting
// the generation, the fencing token, to 1), its owner is fixed per leaser and
// its expiry check reads time.Now. The AWS client is configured like
// Litestream's own S3 client from the same *s3.ReplicaClient.
type S3Leaser struct {
	// Client gives the bucket, path, endpoint, region and keys.
	Client *lss3.ReplicaClient
	// Now is the clock for expiry; nil means time.Now.
	Now func() time.Time

	mu  sync.Mutex
	api *s3.Client
}

var _ Leaser = (*S3Leaser)(nil)

// NewS3Leaser returns the leaser of the S3 replica client c. It does no I/O.
func NewS3Leaser(c *lss3.ReplicaClient) *S3Leaser { return &S3Leaser{Client: c} }

func (l *S3Leaser) core() *leaser { return &leaser{store: s3Store{l}, now: l.Now} }

func (l *S3Leaser) Acquire(ctx context.Context, owner, advertiseURL string, ttl time.Duration) (*Lease, error) {
	return l.core().Acquire(ctx, owner, advertiseURL, ttl)
}

func (l *S3Leaser) Renew(ctx context.Context, lease *Lease, ttl time.Duration) (*Lease, error) {
	return l.core().Renew(ctx, lease, ttl)
}

func (l *S3Leaser) Release(ctx context.Context, lease *Lease) error {
	return l.core().Release(ctx, lease)
}

func (l *S3Leaser) Current(ctx context.Context) (*Lease, error) { return l.core().Current(ctx) }

// key is <path>/lock.json, as in Litestream's s3.Leaser.
func (l *S3Leaser) key() string {
	if l.Client.Path == "" {
		return LeaseFile
	}
	return path.Join(l.Client.Path, LeaseFile)
}

// s3 returns the AWS client, built on first use (it may look up the region).
func (l *S3Leaser) s3(ctx context.Context) (*s3.Client, error) {
	l.mu.Lock()
	defer l.mu.Unlock()
	if l.api != nil {
		return l.api, nil
	}
	c := l.Client
	if c.Bucket == "" {
		return nil, errors.New("s3 bucket required")
	}

	hc := &http.Client{Transport: &http.Transport{
		Proxy:               http.ProxyFromEnvironment,
		MaxIdleConns:        10,
		IdleConnTimeout:     90 * time.Second,
		TLSHandshakeTimeout: 10 * time.Second,
		TLSClientConfig:     &tls.Config{InsecureSkipVerify: c.SkipVerify}, //nolint:gosec // user's skipVerify=true, as Litestream
	}}
	opts := []func(*config.LoadOptions) error{config.WithHTTPClient(hc)}
	if c.AccessKeyID != "" && c.SecretAccessKey != "" {
		opts = append(opts, config.WithCredentialsProvider(credentials.NewStaticCredentialsProvider(c.AccessKeyID, c.SecretAccessKey, "")))
	}
	cfg, err := config.LoadDefaultConfig(ctx, opts...)
	if err != nil {
		return nil, fmt.Errorf("load aws config: %w", err)
	}

	s3opts := func(o *s3.Options) {
		o.UsePathStyle = c.ForcePathStyle
		o.UseARNRegion = true
		if c.Endpoint != "" {
			ep := c.Endpoint
			if !strings.HasPrefix(ep, "http://") && !strings.HasPrefix(ep, "https://") {
				ep = "https://" + ep
			}
			o.BaseEndpoint = aws.String(ep)
			// S3-compatible stores reject the SDK's default aws-chunked checksums (Litestream issue #918).
			o.RequestChecksumCalculation = aws.RequestChecksumCalculationWhenRequired
			o.ResponseChecksumValidation = aws.ResponseChecksumValidationWhenRequired
		}
		if litestream.IsTigrisEndpoint(c.Endpoint) {
			o.APIOptions = append(o.APIOptions, tigrisConsistent)
		}
	}

	// Region as Litestream resolves it: explicit, us-east-1 for custom
	// endpoints, else the bucket's own region.
	switch {
	case c.Region != "":
		cfg.Region = c.Region
	case c.Endpoint != "":
		cfg.Region = lss3.DefaultRegion
	default:
		cfg.Region = lss3.DefaultRegion
		region, err := manager.GetBucketRegion(ctx, s3.NewFromConfig(cfg, s3opts), c.Bucket)
		if err != nil {
			return nil, fmt.Errorf("look up region of bucket %s: %w", c.Bucket, err)
		}
		cfg.Region = region
	}
	l.api = s3.NewFromConfig(cfg, s3opts)
	return l.api, nil
}

// tigrisConsistent asks Tigris for strongly consistent reads, as Litestream does.
func tigrisConsistent(stack *middleware.Stack) error {
	return stack.Build.Add(middleware.BuildMiddlewareFunc("AtollTigrisConsistent",
		func(ctx context.Context, in middleware.BuildInput, next middleware.BuildHandler) (middleware.BuildOutput, middleware.Metadata, error) {
			if req, ok := in.Request.(*smithyhttp.Request); ok {
				req.Header.Set("X-Tigris-Consistent", "true")
			}
			return next.HandleBuild(ctx, in)
		}), middleware.After)
}

type s3Store struct{ l *S3Leaser }

func (s s3Store) where() string {
	return "s3://" + s.l.Client.Bucket + "/" + s.l.key()
}

func (s s3Store) read(ctx context.Context) (*record, string, error) {
	api, err := s.l.s3(ctx)
	if err != nil {
		return nil, "", err
	}
	out, err := api.GetObject(ctx, &s3.GetObjectInput{Bucket: aws.String(s.l.Client.Bucket), Key: aws.String(s.l.key())})
	if isS3NotFound(err) {
		return nil, "", nil
	} else if err != nil {
		return nil, "", fmt.Errorf("get: %w", err)
	}
	defer out.Body.Close()
	var r record
	if err := json.NewDecoder(out.Body).Decode(&r); err != nil {
		return nil, "", fmt.Errorf("decode: %w", err)
	}
	if out.ETag == nil || *out.ETag == "" {
		return nil, "", errors.New("get: no ETag in response")
	}
	return &r, *out.ETag, nil
}

func (s s3Store) write(ctx context.Context, r *record, ifVersion string) (string, error) {
	api, err := s.l.s3(ctx)
	if err != nil {
		return "", err
	}
	data, err := json.Marshal(r)
	if err != nil {
		return "", err
	}
	in := &s3.PutObjectInput{
		Bucket:      aws.String(s.l.Client.Bucket),
		Key:         aws.String(s.l.key()),
		Body:        bytes.NewReader(data),
		ContentType: aws.String("application/json"),
	}
	if ifVersion == "" {
		in.IfNoneMatch = aws.String("*")
	} else {
		in.IfMatch = aws.String(ifVersion)
	}
	out, err := api.PutObject(ctx, in)
	if isS3Conflict(err) {
		return "", errConflict
	} else if err != nil {
		return "", fmt.Errorf("put: %w", err)
	}
	if out.ETag == nil || *out.ETag == "" {
		return "", errors.New("put: no ETag in response")
	}
	return *out.ETag, nil
}

// isS3Conflict reports a failed condition: 412 Precondition Failed, or 409
// ConditionalRequestConflict when AWS sees concurrent conditional writes.
func isS3Conflict(err error) bool {
	if err == nil {
		return false
	}
	var apiErr smithy.APIError
	if errors.As(err, &apiErr) {
		switch apiErr.ErrorCode() {
		case "PreconditionFailed", "ConditionalRequestConflict":
			return true
		}
	}
	code := httpStatus(err)
	return code == http.StatusPreconditionFailed || code == http.StatusConflict
}

func isS3NotFound(err error) bool {
	if err == nil {
		return false
	}
	var nsk *types.NoSuchKey
	if errors.As(err, &nsk) {
		return true
	}
	var apiErr smithy.APIError
	if errors.As(err, &apiErr) {
		switch apiErr.ErrorCode() {
		case "NoSuchKey", "NotFound":
			return true
		case "NoSuchBucket":
			return false
		}
	}
	return httpStatus(err) == http.StatusNotFound
}

func httpStatus(err error) int {
	var re interface{ HTTPStatusCode() int }
	if errors.As(err, &re) {
		return re.HTTPStatusCode()
	}
	return 0
}
