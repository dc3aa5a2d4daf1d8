package azuredevops

import (
	"context"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"net/url"
	"strconv"
	"strings"
	"sync"
	"time"

	"github.com/atollhq/atoll"
)

// DefaultAuthority is Microsoft Entra ID's public cloud endpoint.
const DefaultAuthority = "https://login.microsoftonline.com"

// devOpsScope asks Entra ID for a token for Azure DevOps.
const devOpsScope = devOpsResource + "/.default"

// EntraCredential authenticates as a Microsoft Entra ID service principal
// with a client secret (the OAuth client credentials grant). The principal
// must be added to the Azure DevOps organization as a user. Use it as a
// pointer; it is safe for concurrent use.
type EntraCredential struct {
	TenantID     string
	ClientID     string
	ClientSecret string
	// AuthorityURL is Entra ID's endpoint; DefaultAuthority when empty
	// (another for sovereign clouds).
	AuthorityURL string
	HTTPClient   *http.Client // optional

	once  sync.Once
	cache tokenCache
}

// Authorization implements Credential.
func (c *EntraCredential) Authorization(ctx context.Context) (string, error) {
	tok, err := c.token(ctx)
	if err != nil {
		return "", err
	}
	return "Bearer " + tok, nil
}

// GitAuth implements Credential: Azure Repos takes an Entra ID access token
// as the basic auth password, as Git Credential Manager sends it.
func (c *EntraCredential) GitAuth(ctx context.Context) (string, string, error) {
	tok, err := c.token(ctx)
	if err != nil {
		return "", "", err
	}
	return gitUser, tok, nil
}

// Invalidate forgets the token of authorization (an Authorization value
// this credential returned) so that the next call gets a new one: for a
// caller whose request was refused with 401 before the token's expiry.
func (c *EntraCredential) Invalidate(authorization string) {
	c.init()
	c.cache.invalidate(strings.TrimPrefix(authorization, "Bearer "))
}

func (c *EntraCredential) init() {
	c.once.Do(func() { c.cache.fetch = c.fetch })
}

func (c *EntraCredential) token(ctx context.Context) (string, error) {
	c.init()
	return c.cache.get(ctx)
}

func (c *EntraCredential) fetch(ctx context.Context) (token, error) {
	if c.TenantID == "" || c.ClientID == "" || c.ClientSecret == "" {
		return token{}, atoll.Errorf(atoll.EINVALID, "An Azure DevOps service principal needs a tenant id, a client id and a client secret.")
	}
	authority := c.AuthorityURL
	if authority == "" {
		authority = DefaultAuthority
	}
	endpoint := strings.TrimRight(authority, "/") + "/" + url.PathEscape(c.TenantID) + "/oauth2/v2.0/token"
	form := url.Values{
		"grant_type":    {"client_credentials"},
		"client_id":     {c.ClientID},
		"client_secret": {c.ClientSecret},
		"scope":         {devOpsScope},
	}
	req, err := http.NewRequestWithContext(ctx, http.MethodPost, endpoint, strings.NewReader(form.Encode()))
	if err != nil {
		return token{}, fmt.Errorf("entra token request: %w", err)
	}
	req.Header.Set("Content-Type", "application/x-www-form-urlencoded")
	req.Header.Set("Accept", "application/json")
	who := fmt.Sprintf("client %s in tenant %s", c.ClientID, c.TenantID)
	return doTokenRequest(c.HTTPClient, req, who, c.cache.clock, c.ClientSecret)
}

// tokenResponse is both Entra ID's token response and IMDS's. Numbers come
// as JSON numbers from the first and as strings from the second.
type tokenResponse struct {
	AccessToken      string     `json:"access_token"`
	ExpiresIn        flexNumber `json:"expires_in"`
	ExpiresOn        flexNumber `json:"expires_on"`
	Error            string     `json:"error"`
	ErrorDescription string     `json:"error_description"`
}

type flexNumber int64

func (n *flexNumber) UnmarshalJSON(b []byte) error {
	s := strings.Trim(string(b), `"`)
	if s == "" || s == "null" {
		return nil
	}
	v, err := strconv.ParseInt(s, 10, 64)
	if err != nil {
		return fmt.Errorf("not a number: %s", b)
	}
	*n = flexNumber(v)
	return nil
}

// doTokenRequest sends req and reads the token from the answer. who names
// the identity for errors; secret, if set, is kept out of them.
func doTokenRequest(client *http.Client, req *http.Request, who string, now func() time.Time, secret string) (token, error) {
	if client == nil {
		client = http.DefaultClient
	}
	host := req.URL.Host
	resp, err := client.Do(req)
	if err != nil {
		// The secret is in the body, never in the URL this error shows.
		return token{}, atoll.Errorf(atoll.EUNAVAILABLE, "Could not get an Azure DevOps token from %s for %s: %v", host, who, err)
	}
	defer resp.Body.Close()
	body, err := io.ReadAll(io.LimitReader(resp.Body, 1<<20))
	if err != nil {
		return token{}, atoll.Errorf(atoll.EUNAVAILABLE, "Could not read the token response of %s for %s: %v", host, who, err)
	}
	var tr tokenResponse
	jsonErr := json.Unmarshal(body, &tr)
	if resp.StatusCode != http.StatusOK {
		code := atoll.EUNAVAILABLE
		if resp.StatusCode == http.StatusBadRequest || resp.StatusCode == http.StatusUnauthorized {
			code = atoll.EUNAUTHORIZED // a wrong secret, tenant or client
		}
		reason := resp.Status
		if jsonErr == nil && tr.Error != "" {
			reason = tr.Error
			if d := firstLine(tr.ErrorDescription); d != "" {
				reason += ": " + d
			}
		}
		if secret != "" {
			reason = strings.ReplaceAll(reason, secret, "[secret]")
		}
		return token{}, atoll.Errorf(code, "%s refused an Azure DevOps token for %s: %s", host, who, reason)
	}
	if jsonErr != nil || tr.AccessToken == "" {
		return token{}, atoll.Errorf(atoll.EUNAVAILABLE, "%s answered without an access token for %s.", host, who)
	}
	var expires time.Time
	switch {
	case tr.ExpiresIn > 0: // relative: immune to a skewed clock
		expires = now().Add(time.Duration(tr.ExpiresIn) * time.Second)
	case tr.ExpiresOn > 0:
		expires = time.Unix(int64(tr.ExpiresOn), 0)
	default:
		return token{}, atoll.Errorf(atoll.EUNAVAILABLE, "%s answered a token without expiry for %s.", host, who)
	}
	return token{value: tr.AccessToken, expires: expires}, nil
}

// firstLine keeps Entra ID's error description short: its further lines
// are a trace id, a correlation id and a timestamp.
func firstLine(s string) string {
	s, _, _ = strings.Cut(strings.TrimSpace(s), "\n")
	return strings.TrimSpace(s)
}
