package azuredevops

import (
	"context"
	"fmt"
	"net/http"
	"net/url"
	"strings"
	"sync"
)

// DefaultIMDSEndpoint is the Azure Instance Metadata Service's token
// endpoint, reachable from Azure VMs and scale sets.
const DefaultIMDSEndpoint = "http://169.254.169.254/metadata/identity/oauth2/token"

// ManagedIdentityCredential authenticates as the managed identity of the
// Azure VM Atoll runs on, through the Instance Metadata Service. The
// identity must be added to the Azure DevOps organization as a user. Use it
// as a pointer; it is safe for concurrent use.
type ManagedIdentityCredential struct {
	// ClientID picks a user-assigned identity; empty means the VM's
	// system-assigned one (or its only user-assigned one).
	ClientID string
	// Endpoint is DefaultIMDSEndpoint when empty.
	Endpoint   string
	HTTPClient *http.Client // optional

	once  sync.Once
	cache tokenCache
}

// Authorization implements Credential.
func (c *ManagedIdentityCredential) Authorization(ctx context.Context) (string, error) {
	tok, err := c.token(ctx)
	if err != nil {
		return "", err
	}
	return "Bearer " + tok, nil
}

// GitAuth implements Credential, as EntraCredential's does.
func (c *ManagedIdentityCredential) GitAuth(ctx context.Context) (string, string, error) {
	tok, err := c.token(ctx)
	if err != nil {
		return "", "", err
	}
	return gitUser, tok, nil
}

// Invalidate forgets the token of authorization, as EntraCredential's does.
func (c *ManagedIdentityCredential) Invalidate(authorization string) {
	c.init()
	c.cache.invalidate(strings.TrimPrefix(authorization, "Bearer "))
}

func (c *ManagedIdentityCredential) init() {
	c.once.Do(func() { c.cache.fetch = c.fetch })
}

func (c *ManagedIdentityCredential) token(ctx context.Context) (string, error) {
	c.init()
	return c.cache.get(ctx)
}

func (c *ManagedIdentityCredential) fetch(ctx context.Context) (token, error) {
	endpoint := c.Endpoint
	if endpoint == "" {
		endpoint = DefaultIMDSEndpoint
	}
	q := url.Values{"api-version": {"2018-02-01"}, "resource": {devOpsResource}}
	if c.ClientID != "" {
		q.Set("client_id", c.ClientID)
	}
	req, err := http.NewRequestWithContext(ctx, http.MethodGet, endpoint+"?"+q.Encode(), nil)
	if err != nil {
		return token{}, fmt.Errorf("managed identity token request: %w", err)
	}
	// IMDS refuses requests without it: a guard against SSRF.
	req.Header.Set("Metadata", "true")
	who := "the VM's managed identity"
	if c.ClientID != "" {
		who = "managed identity " + c.ClientID
	}
	return doTokenRequest(c.HTTPClient, req, who, c.cache.clock, "")
}
