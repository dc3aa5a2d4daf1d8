package azuredevops

import (
	"context"
	"fmt"
	"net/http"
	"net/url"
	"os"
	"strings"
	"sync"

	"github.com/atollhq/atoll"
)

// DefaultIMDSEndpoint is the Azure Instance Metadata Service's token
// endpoint, reachable from Azure VMs and scale sets.
const DefaultIMDSEndpoint = "http://169.254.169.254/metadata/identity/oauth2/token"

// The environment Azure sets up for managed identities other than a VM's,
// as Azure's own SDKs read it.
const (
	// AKS workload identity: a Kubernetes service account token, renewed
	// in a file by the kubelet, is exchanged for an Entra ID token.
	envFederatedTokenFile = "AZURE_FEDERATED_TOKEN_FILE"
	envClientID           = "AZURE_CLIENT_ID"
	envTenantID           = "AZURE_TENANT_ID"
	envAuthorityHost      = "AZURE_AUTHORITY_HOST"
	// App Service, Azure Functions and Container Apps: a local token
	// endpoint that wants a per-instance header.
	envIdentityEndpoint = "IDENTITY_ENDPOINT"
	envIdentityHeader   = "IDENTITY_HEADER"
)

// clientAssertionType is the OAuth client assertion type of a federated
// token (RFC 7523).
const clientAssertionType = "urn:ietf:params:oauth:client-assertion-type:jwt-bearer"

// ManagedIdentityCredential authenticates as the Azure managed identity of
// where Atoll runs, found from the environment as Azure's SDKs find it:
//
//   - AKS workload identity, when AZURE_FEDERATED_TOKEN_FILE is set: the
//     service account token in that file is exchanged at Entra ID
//     (AZURE_AUTHORITY_HOST, else DefaultAuthority) for a token of client
//     AZURE_CLIENT_ID in tenant AZURE_TENANT_ID;
//   - App Service, Functions or Container Apps, when IDENTITY_ENDPOINT and
//     IDENTITY_HEADER are set: their local token endpoint;
//   - otherwise a VM's, through the Instance Metadata Service.
//
// The identity must be added to the Azure DevOps organization as a user.
// Use it as a pointer; it is safe for concurrent use.
type ManagedIdentityCredential struct {
	// ClientID picks a user-assigned identity; empty means the system-
	// assigned one (or the only user-assigned one). For workload identity
	// it overrides AZURE_CLIENT_ID.
	ClientID string
	// TenantID and AuthorityURL override AZURE_TENANT_ID and
	// AZURE_AUTHORITY_HOST for workload identity.
	TenantID     string
	AuthorityURL string
	// Endpoint, when set, is the IMDS token endpoint to use whatever the
	// environment says; DefaultIMDSEndpoint when IMDS is found by default.
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

func (c *ManagedIdentityCredential) getenv(k string) string { return os.Getenv(k) }

// Kind names the kind of managed identity the environment gives:
// "workload identity", "App Service", "Azure Arc" (not supported) or
// "IMDS".
func (c *ManagedIdentityCredential) Kind() string {
	switch {
	case c.Endpoint != "":
		return "IMDS"
	case c.getenv(envFederatedTokenFile) != "":
		return "workload identity"
	case c.getenv(envIdentityEndpoint) != "" && c.getenv(envIdentityHeader) != "":
		return "App Service"
	case c.getenv(envIdentityEndpoint) != "":
		return "Azure Arc"
	}
	return "IMDS"
}

// fetch finds the kind of identity at each renewal: the environment does
// not change, and reading it costs nothing next to the request.
func (c *ManagedIdentityCredential) fetch(ctx context.Context) (token, error) {
	switch c.Kind() {
	case "workload identity":
		return c.fetchWorkload(ctx)
	case "App Service":
		return c.fetchAppService(ctx)
	case "Azure Arc":
		return token{}, atoll.Errorf(atoll.EINVALID, "%s is set without %s (Azure Arc?): Atoll supports the managed identities of VMs (IMDS), App Service, Functions and Container Apps, and AKS workload identity.", envIdentityEndpoint, envIdentityHeader)
	}
	return c.fetchIMDS(ctx)
}

func (c *ManagedIdentityCredential) fetchIMDS(ctx context.Context) (token, error) {
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

// fetchAppService asks the local endpoint of App Service, Functions or
// Container Apps (API version 2019-08-01), which wants the instance's
// IDENTITY_HEADER in X-IDENTITY-HEADER.
func (c *ManagedIdentityCredential) fetchAppService(ctx context.Context) (token, error) {
	endpoint, secret := c.getenv(envIdentityEndpoint), c.getenv(envIdentityHeader)
	u, err := url.Parse(endpoint)
	if err != nil || (u.Scheme != "http" && u.Scheme != "https") || u.Host == "" {
		return token{}, atoll.Errorf(atoll.EINVALID, "%s is not an http(s) URL.", envIdentityEndpoint)
	}
	q := u.Query()
	q.Set("api-version", "2019-08-01")
	q.Set("resource", devOpsResource)
	if c.ClientID != "" {
		q.Set("client_id", c.ClientID)
	}
	u.RawQuery = q.Encode()
	req, err := http.NewRequestWithContext(ctx, http.MethodGet, u.String(), nil)
	if err != nil {
		return token{}, fmt.Errorf("managed identity token request: %w", err)
	}
	req.Header.Set("X-IDENTITY-HEADER", secret)
	who := "the App Service managed identity"
	if c.ClientID != "" {
		who = "App Service managed identity " + c.ClientID
	}
	return doTokenRequest(c.HTTPClient, req, who, c.cache.clock, secret)
}

// fetchWorkload exchanges the federated service account token for an
// Entra ID token (client credentials with a client assertion). The file
// is read at each renewal: the kubelet rotates it.
func (c *ManagedIdentityCredential) fetchWorkload(ctx context.Context) (token, error) {
	clientID := firstNonEmpty(c.ClientID, c.getenv(envClientID))
	tenantID := firstNonEmpty(c.TenantID, c.getenv(envTenantID))
	authority := firstNonEmpty(c.AuthorityURL, c.getenv(envAuthorityHost), DefaultAuthority)
	if clientID == "" || tenantID == "" {
		return token{}, atoll.Errorf(atoll.EINVALID, "AKS workload identity (%s is set) needs a client id (%s or --azuredevops-client-id) and a tenant id (%s or --azuredevops-tenant-id).",
			envFederatedTokenFile, envClientID, envTenantID)
	}
	file := c.getenv(envFederatedTokenFile)
	raw, err := os.ReadFile(file)
	assertion := strings.TrimSpace(string(raw))
	if err != nil || assertion == "" {
		// The error names the file, never its content.
		return token{}, atoll.Errorf(atoll.EUNAVAILABLE, "Could not read the workload identity token file %s (%s): %v", file, envFederatedTokenFile, readError(err))
	}
	endpoint := strings.TrimRight(authority, "/") + "/" + url.PathEscape(tenantID) + "/oauth2/v2.0/token"
	form := url.Values{
		"grant_type":            {"client_credentials"},
		"client_id":             {clientID},
		"client_assertion_type": {clientAssertionType},
		"client_assertion":      {assertion},
		"scope":                 {devOpsScope},
	}
	req, err := http.NewRequestWithContext(ctx, http.MethodPost, endpoint, strings.NewReader(form.Encode()))
	if err != nil {
		return token{}, fmt.Errorf("workload identity token request: %w", err)
	}
	req.Header.Set("Content-Type", "application/x-www-form-urlencoded")
	req.Header.Set("Accept", "application/json")
	who := fmt.Sprintf("workload identity %s in tenant %s", clientID, tenantID)
	return doTokenRequest(c.HTTPClient, req, who, c.cache.clock, assertion)
}

func readError(err error) any {
	if err == nil {
		return "the file is empty"
	}
	return err
}

func firstNonEmpty(s ...string) string {
	for _, v := range s {
		if v != "" {
			return v
		}
	}
	return ""
}
