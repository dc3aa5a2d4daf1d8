package azuredevops

import (
	"context"
	"io"
	"net/http"
	"sync"
	"time"
)

// refreshMargin is how long before its expiry a token is replaced, so that
// no call starts with a token that expires on the way.
const refreshMargin = 5 * time.Minute

// fetchTimeout bounds one token request; callers stop waiting when their
// own context ends.
const fetchTimeout = time.Minute

// token is an access token and when it expires.
type token struct {
	value   string
	expires time.Time
}

// tokenCache keeps the last token of a credential and renews it when it
// nears expiry. Concurrent callers that find it stale share one request.
type tokenCache struct {
	fetch func(ctx context.Context) (token, error)
	now   func() time.Time

	mu        sync.Mutex
	tok       token
	refreshAt time.Time
	flight    *tokenFlight // the request under way, if any
}

type tokenFlight struct {
	done  chan struct{}
	value string
	err   error
}

func (c *tokenCache) clock() time.Time {
	if c.now != nil {
		return c.now()
	}
	return time.Now()
}

// get returns a token that is not about to expire.
func (c *tokenCache) get(ctx context.Context) (string, error) {
	c.mu.Lock()
	if c.tok.value != "" && c.clock().Before(c.refreshAt) {
		v := c.tok.value
		c.mu.Unlock()
		return v, nil
	}
	f := c.flight
	if f == nil {
		f = &tokenFlight{done: make(chan struct{})}
		c.flight = f
		// The request outlives the caller that started it: the others
		// waiting for it must not fail because that one gave up.
		go c.refresh(context.WithoutCancel(ctx), f)
	}
	c.mu.Unlock()
	select {
	case <-f.done:
		return f.value, f.err
	case <-ctx.Done():
		return "", ctx.Err()
	}
}

func (c *tokenCache) refresh(ctx context.Context, f *tokenFlight) {
	ctx, cancel := context.WithTimeout(ctx, fetchTimeout)
	defer cancel()
	tok, err := c.fetch(ctx)

	c.mu.Lock()
	defer c.mu.Unlock()
	now := c.clock()
	switch {
	case err == nil:
		c.tok = tok
		// A token that lives less than twice the margin is renewed
		// halfway through its life rather than at every call.
		margin := min(refreshMargin, tok.expires.Sub(now)/2)
		c.refreshAt = tok.expires.Add(-margin)
		f.value = tok.value
	case c.tok.value != "" && now.Before(c.tok.expires):
		// The old token still works: use it and try again next call.
		f.value = c.tok.value
	default:
		f.err = err
	}
	c.flight = nil
	close(f.done)
}

// invalidate drops the cached token if it is value (the API refused it
// before its time: revoked, or the clock is off).
func (c *tokenCache) invalidate(value string) {
	c.mu.Lock()
	defer c.mu.Unlock()
	if value != "" && c.tok.value == value {
		c.tok = token{}
		c.refreshAt = time.Time{}
	}
}

// invalidator is a Credential whose tokens the API can refuse before their
// expiry (revoked, a clock that is off): EntraCredential and
// ManagedIdentityCredential.
type invalidator interface {
	Invalidate(authorization string)
}

// reauthTransport retries, once, a request that the API refused with 401
// although its credential thought the token good: it drops that token from
// the credential's cache and sends the request again with a fresh one. A
// credential without a cache (a PAT) gets the 401 as it came.
type reauthTransport struct {
	base http.RoundTripper
	cred Credential
}

func (t reauthTransport) RoundTrip(r *http.Request) (*http.Response, error) {
	resp, err := t.base.RoundTrip(r)
	inv, ok := t.cred.(invalidator)
	auth := r.Header.Get("Authorization")
	if err != nil || !ok || resp.StatusCode != http.StatusUnauthorized || auth == "" {
		return resp, err
	}
	if r.Body != nil && r.Body != http.NoBody && r.GetBody == nil {
		return resp, nil // the body cannot be sent again
	}
	inv.Invalidate(auth)
	fresh, ferr := t.cred.Authorization(r.Context())
	if ferr != nil || fresh == auth {
		return resp, nil // the 401 says more than a failed renewal would
	}
	retry := r.Clone(r.Context())
	if r.GetBody != nil {
		body, berr := r.GetBody()
		if berr != nil {
			return resp, nil
		}
		retry.Body = body
	}
	retry.Header.Set("Authorization", fresh)
	io.Copy(io.Discard, io.LimitReader(resp.Body, 1<<20))
	resp.Body.Close()
	return t.base.RoundTrip(retry)
}
