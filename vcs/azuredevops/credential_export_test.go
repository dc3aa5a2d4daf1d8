package azuredevops

import "time"

// Test hooks: the token caches' clock.

func SetEntraClock(c *EntraCredential, now func() time.Time) { c.cache.now = now }

func SetManagedIdentityClock(c *ManagedIdentityCredential, now func() time.Time) {
	c.cache.now = now
}
