package replica_test

import (
	"strings"
	"testing"

	"github.com/benbjohnson/litestream"
	"github.com/benbjohnson/litestream/file"
	lss3 "github.com/benbjohnson/litestream/s3"

	"github.com/atollhq/atoll"
	"github.com/atollhq/atoll/replica"
)

func TestParseURL(t *testing.T) {
	t.Setenv("AWS_ACCESS_KEY_ID", "AKIDTEST")
	t.Setenv("AWS_SECRET_ACCESS_KEY", "secret-from-env")
	t.Setenv("LITESTREAM_S3_ENDPOINT", "")

	tests := []struct {
		raw   string
		typ   string
		check func(t *testing.T, c litestream.ReplicaClient)
	}{
		{
			raw: "s3://bucket/atoll/db?endpoint=http://127.0.0.1:9000&region=eu-west-1&forcePathStyle=true",
			typ: "s3",
			check: func(t *testing.T, c litestream.ReplicaClient) {
				s := c.(*lss3.ReplicaClient)
				if s.Bucket != "bucket" || s.Path != "atoll/db" || s.Endpoint != "http://127.0.0.1:9000" ||
					s.Region != "eu-west-1" || !s.ForcePathStyle {
					t.Errorf("got bucket=%q path=%q endpoint=%q region=%q forcePathStyle=%v", s.Bucket, s.Path, s.Endpoint, s.Region, s.ForcePathStyle)
				}
				if s.AccessKeyID != "AKIDTEST" || s.SecretAccessKey != "secret-from-env" {
					t.Errorf("keys not taken from AWS_* env: %q", s.AccessKeyID)
				}
			},
		},
		{
			raw: "s3://bucket.s3.us-west-2.amazonaws.com/a/b",
			typ: "s3",
			check: func(t *testing.T, c litestream.ReplicaClient) {
				s := c.(*lss3.ReplicaClient)
				if s.Bucket != "bucket" || s.Region != "us-west-2" || s.Path != "a/b" || s.Endpoint != "" {
					t.Errorf("got bucket=%q region=%q path=%q endpoint=%q", s.Bucket, s.Region, s.Path, s.Endpoint)
				}
			},
		},
		{
			raw: "file:///var/lib/atoll/replica",
			typ: "file",
			check: func(t *testing.T, c litestream.ReplicaClient) {
				if p := c.(*file.ReplicaClient).Path(); p != "/var/lib/atoll/replica" {
					t.Errorf("path %q", p)
				}
			},
		},
		{raw: "gs://bucket/path", typ: "gs"},
		{raw: "abs://account@container/path", typ: "abs"},
		{raw: "sftp://user:pw@host:22/path", typ: "sftp"},
		{raw: "webdav://host/path", typ: "webdav"},
		{raw: "webdavs://user:pw@host/path", typ: "webdav"},
		{raw: "nats://host:4222/bucket", typ: "nats"},
		{raw: "oss://bucket/path", typ: "oss"},
	}
	for _, tt := range tests {
		t.Run(tt.raw, func(t *testing.T) {
			c, err := replica.ParseURL(tt.raw)
			if err != nil {
				t.Fatalf("ParseURL: %v", err)
			}
			if c.Type() != tt.typ {
				t.Fatalf("type %q, want %q", c.Type(), tt.typ)
			}
			if tt.check != nil {
				tt.check(t, c)
			}
		})
	}
}

func TestParseURLErrors(t *testing.T) {
	tests := []struct {
		raw    string
		want   string // part of the message naming the problem
		secret string // must not appear in the message
	}{
		{raw: "", want: "empty"},
		{raw: "/var/lib/replica", want: "scheme is required"},
		{raw: "ftp://host/x", want: `unsupported scheme "ftp"`},
		{raw: "s3:///db", want: "bucket required"},
		{raw: "file://", want: "absolute path"},
		{raw: "file://relative/dir", want: "absolute path"},
		{raw: "sftp://user:hunter2@/path", want: "host required", secret: "hunter2"},
		{raw: "sftp://:hunter2@host/path", want: "user required", secret: "hunter2"},
		{raw: "sftp://user:hunter2@host:badport/x", want: "invalid port", secret: "hunter2"},
		{raw: "webdav://u:p%41ssword@/x", want: "host required", secret: "pAssword"},
		{raw: "s3://bucket/db?concurrency=-1&sseCustomerKey=c2VjcmV0", want: "concurrency", secret: "c2VjcmV0"},
	}
	for _, tt := range tests {
		t.Run(tt.raw, func(t *testing.T) {
			_, err := replica.ParseURL(tt.raw)
			if err == nil {
				t.Fatal("ParseURL succeeded")
			}
			if atoll.ErrorCode(err) != atoll.EINVALID {
				t.Errorf("code %q, want %q", atoll.ErrorCode(err), atoll.EINVALID)
			}
			msg := atoll.ErrorMessage(err)
			if !strings.Contains(msg, tt.want) {
				t.Errorf("message %q does not say %q", msg, tt.want)
			}
			if tt.secret != "" && (strings.Contains(msg, tt.secret) || strings.Contains(err.Error(), tt.secret)) {
				t.Errorf("message leaks the secret: %q", msg)
			}
		})
	}
}

func TestRedact(t *testing.T) {
	tests := []struct{ raw, want string }{
		{"", ""},
		{"file:///var/lib/replica", "file:///var/lib/replica"},
		{"file:///dir/a@b", "file:///dir/a@b"},
		{"s3://bucket/db?endpoint=http://127.0.0.1:9000&region=us-east-1&forcePathStyle=true",
			"s3://bucket/db?endpoint=http://127.0.0.1:9000&region=us-east-1&forcePathStyle=true"},
		{"sftp://user@host/p", "sftp://user@host/p"},
		{"sftp://user:hunter2@host:22/p", "sftp://user:REDACTED@host:22/p"},
		{"sftp://u:pa/ss@host/p", "sftp://u:REDACTED@host/p"},
		{"webdavs://u:p@h/x?token=t0k&x=1", "webdavs://u:REDACTED@h/x?token=REDACTED&x=1"},
		{"s3://b/p?sseCustomerKey=abc&region=x", "s3://b/p?sseCustomerKey=REDACTED&region=x"},
		{"s3://b/p?sse-customer-key=abc&sse-customer-key-md5=def", "s3://b/p?sse-customer-key=REDACTED&sse-customer-key-md5=REDACTED"},
		{"s3://b/p?X-Amz-Signature=abc&X-Amz-Credential=def", "s3://b/p?X-Amz-Signature=REDACTED&X-Amz-Credential=REDACTED"},
		{"s3://b/p?secret%5Fkey=abc", "s3://b/p?secret%5Fkey=REDACTED"},
	}
	for _, tt := range tests {
		if got := replica.Redact(tt.raw); got != tt.want {
			t.Errorf("Redact(%q) = %q, want %q", tt.raw, got, tt.want)
		}
	}
}
