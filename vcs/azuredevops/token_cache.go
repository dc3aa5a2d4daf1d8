package azuredevops

import (
	"context"
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
