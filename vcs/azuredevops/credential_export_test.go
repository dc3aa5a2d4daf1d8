package azuredevops

import (
	"context"
	"time"
)

// Test hooks: the token caches' clock.

func SetEntraClock(c *EntraCredential, now func() time.Time) { c.cache.now = now }

func SetManagedIdentityClock(c *ManagedIdentityCredential, now func() time.Time) {
	c.cache.now = now
}

// SetSleep replaces the wait between looks at a queued completion.
func SetSleep(p *Provider, sleep func(context.Context, time.Duration) error) { p.sleeper = sleep }

const MergeWait = mergeWait
