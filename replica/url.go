// Package replica is everything Atoll does with Litestream: replica URLs and
// clients, the lease that elects the active node (file:// and s3://), the
// fence that stops a deposed active from writing to the replica, replication
// on the active, following on the standby and restore for disaster recovery.
package replica

import (
	"errors"
	"net/url"
	"path/filepath"
	"strings"

	"github.com/benbjohnson/litestream"
	// Each client package registers its URL scheme with Litestream in init.
	_ "github.com/benbjohnson/litestream/abs"
	"github.com/benbjohnson/litestream/file"
	_ "github.com/benbjohnson/litestream/gs"
	_ "github.com/benbjohnson/litestream/nats"
	_ "github.com/benbjohnson/litestream/oss"
	_ "github.com/benbjohnson/litestream/s3"
	_ "github.com/benbjohnson/litestream/sftp"
	_ "github.com/benbjohnson/litestream/webdav"

	"github.com/atollhq/atoll"
)

// Schemes lists the replica URL schemes ParseURL accepts: those registered
// by Litestream v0.5.18's client packages.
var Schemes = []string{"abs", "file", "gs", "nats", "oss", "s3", "sftp", "webdav", "webdavs"}

// ParseURL returns the Litestream replica client for a replica URL, using
// Litestream's own parsing (litestream.NewReplicaClientFromURL), e.g.
// s3://bucket/path?endpoint=…&region=…&forcePathStyle=true (keys from
// AWS_ACCESS_KEY_ID / AWS_SECRET_ACCESS_KEY as Litestream reads them) or
// file:///dir. It does no I/O: the client connects on Init.
//
// Errors are coded EINVALID and never contain secrets from the URL.
func ParseURL(raw string) (litestream.ReplicaClient, error) {
	if strings.TrimSpace(raw) == "" {
		return nil, atoll.Errorf(atoll.EINVALID, "Replica URL is empty.")
	}
	if !litestream.IsURL(raw) {
		return nil, atoll.Errorf(atoll.EINVALID, "Invalid replica URL %s: a scheme is required (e.g. s3://bucket/path or file:///dir).", Redact(raw))
	}
	scheme := strings.ToLower(raw[:strings.Index(raw, "://")])
	if !knownScheme(scheme) {
		return nil, atoll.Errorf(atoll.EINVALID, "Invalid replica URL %s: unsupported scheme %q (supported: %s).", Redact(raw), scheme, strings.Join(Schemes, ", "))
	}
	if scheme == "file" {
		// Litestream reads file://dir/x as /dir/x; refuse the ambiguity.
		if u, err := url.Parse(raw); err == nil && u.Host != "" {
			return nil, atoll.Errorf(atoll.EINVALID, "Invalid replica URL %s: a file URL needs an absolute path (file:///dir), not host %q.", Redact(raw), u.Host)
		}
	}

	client, err := litestream.NewReplicaClientFromURL(raw)
	if err != nil {
		return nil, atoll.Errorf(atoll.EINVALID, "Invalid replica URL %s: %s.", Redact(raw), scrub(raw, unwrapURLError(err)))
	}
	if fc, ok := client.(*file.ReplicaClient); ok && !filepath.IsAbs(fc.Path()) {
		return nil, atoll.Errorf(atoll.EINVALID, "Invalid replica URL %s: a file URL needs an absolute path (file:///dir).", Redact(raw))
	}
	return client, nil
}

func knownScheme(s string) bool {
	for _, k := range Schemes {
		if s == k {
			return true
		}
	}
	return false
}

// unwrapURLError drops net/url's "parse <raw URL>:" prefix, which would
// repeat the URL (and its password) verbatim.
func unwrapURLError(err error) string {
	var ue *url.Error
	if errors.As(err, &ue) {
		return ue.Err.Error()
	}
	return err.Error()
}

// redacted replaces secrets in URLs.
const redacted = "REDACTED"

// Redact returns raw with its secrets replaced, for logs and status pages:
// the password of the user info and the values of query parameters that hold
// keys, secrets, tokens or signatures. It works on malformed URLs too, erring
// on the side of hiding more.
func Redact(raw string) string {
	rest, query, hasQuery := strings.Cut(raw, "?")

	// User info: everything between "://" and the last "@" before the query,
	// so that a password containing an unescaped "/" is still covered.
	if i := strings.Index(rest, "://"); i >= 0 {
		auth := rest[i+3:]
		if at := strings.LastIndex(auth, "@"); at >= 0 {
			if user, ok := userWithPassword(auth[:at]); ok {
				rest = rest[:i+3] + user + ":" + redacted + auth[at:]
			}
		}
	}
	if !hasQuery {
		return rest
	}
	// Rewrite only the secret values, keeping the rest byte for byte.
	pairs := strings.Split(query, "&")
	for i, kv := range pairs {
		if k, _, ok := strings.Cut(kv, "="); ok && secretParam(unescape(k)) {
			pairs[i] = k + "=" + redacted
		}
	}
	return rest + "?" + strings.Join(pairs, "&")
}

func unescape(s string) string {
	if u, err := url.QueryUnescape(s); err == nil {
		return u
	}
	return s
}

// userWithPassword reports whether s, the text before the last "@" of a
// URL's authority, is "user:password" and returns the user. A "/" before any
// ":" means the "@" belongs to the path instead.
func userWithPassword(s string) (user string, ok bool) {
	colon := strings.Index(s, ":")
	slash := strings.Index(s, "/")
	if colon < 0 || (slash >= 0 && slash < colon) {
		return "", false
	}
	return s[:colon], true
}

// secretParam reports whether a query parameter name looks like it carries a
// credential (sseCustomerKey, sse-customer-key-md5, accountKey, token, …).
func secretParam(name string) bool {
	n := strings.NewReplacer("-", "", "_", "").Replace(strings.ToLower(name))
	for _, s := range []string{"secret", "password", "passwd", "token", "signature", "credential"} {
		if strings.Contains(n, s) {
			return true
		}
	}
	return strings.HasSuffix(n, "key") || strings.HasSuffix(n, "keymd5") || strings.HasSuffix(n, "keyid") ||
		n == "sig" || n == "sas" || n == "auth" || n == "pass"
}

// scrub removes every secret of raw from msg (an error from Litestream that
// may quote the URL or parts of it).
func scrub(raw, msg string) string {
	msg = strings.ReplaceAll(msg, raw, Redact(raw))
	for _, s := range secrets(raw) {
		msg = strings.ReplaceAll(msg, s, redacted)
	}
	return msg
}

// secrets returns the secret substrings of raw (raw and decoded forms).
func secrets(raw string) []string {
	var out []string
	add := func(s string) {
		if s == "" {
			return
		}
		out = append(out, s)
		if d, err := url.QueryUnescape(s); err == nil && d != s && d != "" {
			out = append(out, d)
		}
	}
	rest, query, _ := strings.Cut(raw, "?")
	if i := strings.Index(rest, "://"); i >= 0 {
		auth := rest[i+3:]
		if at := strings.LastIndex(auth, "@"); at >= 0 {
			if user, ok := userWithPassword(auth[:at]); ok {
				add(auth[len(user)+1 : at])
			}
		}
	}
	for _, kv := range strings.Split(query, "&") {
		if k, v, ok := strings.Cut(kv, "="); ok && secretParam(unescape(k)) {
			add(v)
		}
	}
	return out
}
