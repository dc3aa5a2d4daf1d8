package azuredevops_test

import (
	"context"
	"encoding/json"
	"fmt"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/atollhq/atoll"
	"github.com/atollhq/atoll/vcs/azuredevops"
)

// noManagedIdentityEnv clears what Azure sets for managed identities, so
// that a test sees only what it sets.
func noManagedIdentityEnv(t *testing.T) {
	for _, k := range []string{"AZURE_FEDERATED_TOKEN_FILE", "AZURE_CLIENT_ID", "AZURE_TENANT_ID", "AZURE_AUTHORITY_HOST", "IDENTITY_ENDPOINT", "IDENTITY_HEADER"} {
		t.Setenv(k, "")
	}
}

// shortCtx keeps a test that would reach for the real IMDS from hanging.
func shortCtx(t *testing.T) context.Context {
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
	t.Cleanup(cancel)
	return ctx
}

// fakeWorkloadEntra is Entra ID's token endpoint taking a federated
// service account token as a client assertion; it echoes a refused
// assertion in its error, as a check that Atoll never shows it.
func fakeWorkloadEntra(t *testing.T, wantAssertion *atomic.Value, requests *atomic.Int64) *httptest.Server {
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Content-Type", "application/json")
		if r.Method != http.MethodPost || r.URL.Path != "/"+tenant+"/oauth2/v2.0/token" || r.URL.RawQuery != "" {
			t.Errorf("%s %s", r.Method, r.URL)
		}
		r.ParseForm()
		f := r.PostForm
		if f.Get("grant_type") != "client_credentials" || f.Get("client_id") != clientID ||
			f.Get("client_assertion_type") != "urn:ietf:params:oauth:client-assertion-type:jwt-bearer" ||
			f.Get("scope") != "499b84ac-1321-427f-aa17-267ca6975798/.default" || f.Has("client_secret") {
			t.Errorf("form %v", f)
		}
		if a := f.Get("client_assertion"); a != wantAssertion.Load().(string) {
			w.WriteHeader(http.StatusBadRequest)
			json.NewEncoder(w).Encode(map[string]any{"error": "invalid_client",
				"error_description": "AADSTS700213: No matching federated identity record found for presented assertion " + a + ".\r\nTrace ID: 1"})
			return
		}
		n := requests.Add(1)
		fmt.Fprintf(w, `{"token_type":"Bearer","expires_in":3600,"access_token":"wi-tok-%d"}`, n)
	}))
	t.Cleanup(srv.Close)
	return srv
}

// AKS workload identity: the service account token in
// AZURE_FEDERATED_TOKEN_FILE is exchanged at AZURE_AUTHORITY_HOST for a
// token of AZURE_CLIENT_ID in AZURE_TENANT_ID; a rotated file is read
// again at the next renewal.
func TestManagedIdentityWorkload(t *testing.T) {
	noManagedIdentityEnv(t)
	var want atomic.Value
	want.Store("sa-token-1")
	var requests atomic.Int64
	srv := fakeWorkloadEntra(t, &want, &requests)
	file := filepath.Join(t.TempDir(), "azure-identity-token")
	os.WriteFile(file, []byte("sa-token-1\n"), 0o600)
	t.Setenv("AZURE_FEDERATED_TOKEN_FILE", file)
	t.Setenv("AZURE_CLIENT_ID", clientID)
	t.Setenv("AZURE_TENANT_ID", tenant)
	t.Setenv("AZURE_AUTHORITY_HOST", srv.URL+"/")

	c := newClock()
	cred := &azuredevops.ManagedIdentityCredential{HTTPClient: srv.Client()}
	azuredevops.SetManagedIdentityClock(cred, c.Now)
	ctx := shortCtx(t)
	got, err := cred.Authorization(ctx)
	if err != nil || got != "Bearer wi-tok-1" {
		t.Fatalf("Authorization = %q, %v; want Bearer wi-tok-1", got, err)
	}
	if k := cred.Kind(); k != "workload identity" {
		t.Errorf("Kind = %q", k)
	}

	// The kubelet rotates the file; the next renewal sends the new one.
	os.WriteFile(file, []byte("sa-token-2"), 0o600)
	want.Store("sa-token-2")
	c.Advance(56 * time.Minute)
	if got, err := cred.Authorization(ctx); err != nil || got != "Bearer wi-tok-2" {
		t.Fatalf("after rotation: %q, %v; want Bearer wi-tok-2", got, err)
	}

	// A refused assertion: the error says why without showing it.
	want.Store("something-else")
	c.Advance(2 * time.Hour)
	_, err = cred.Authorization(ctx)
	if atoll.ErrorCode(err) != atoll.EUNAUTHORIZED || !strings.Contains(err.Error(), "AADSTS700213") || strings.Contains(err.Error(), "sa-token-2") {
		t.Errorf("refused assertion: %v; want EUNAUTHORIZED with Entra's reason and without the token", err)
	}
}

func TestManagedIdentityWorkloadMisconfigured(t *testing.T) {
	noManagedIdentityEnv(t)
	t.Setenv("AZURE_FEDERATED_TOKEN_FILE", filepath.Join(t.TempDir(), "missing"))
	t.Setenv("AZURE_AUTHORITY_HOST", "http://127.0.0.1:1")
	ctx := shortCtx(t)
	// No tenant: said before any request.
	cred := &azuredevops.ManagedIdentityCredential{ClientID: clientID}
	if _, err := cred.Authorization(ctx); atoll.ErrorCode(err) != atoll.EINVALID || !strings.Contains(atoll.ErrorMessage(err), "AZURE_TENANT_ID") {
		t.Errorf("no tenant: %v", err)
	}
	// The flags stand in for the environment; the file is missing.
	cred = &azuredevops.ManagedIdentityCredential{ClientID: clientID, TenantID: tenant}
	if _, err := cred.Authorization(ctx); atoll.ErrorCode(err) != atoll.EUNAVAILABLE || !strings.Contains(atoll.ErrorMessage(err), "AZURE_FEDERATED_TOKEN_FILE") {
		t.Errorf("missing file: %v", err)
	}
}

// App Service, Functions and Container Apps: IDENTITY_ENDPOINT with API
// version 2019-08-01 and IDENTITY_HEADER in X-IDENTITY-HEADER.
func TestManagedIdentityAppService(t *testing.T) {
	noManagedIdentityEnv(t)
	const header = "8f1c2b3a-identity-header"
	var requests atomic.Int64
	c := newClock()
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Content-Type", "application/json")
		q := r.URL.Query()
		if r.Method != http.MethodGet || r.URL.Path != "/msi/token" || q.Get("api-version") != "2019-08-01" ||
			q.Get("resource") != "499b84ac-1321-427f-aa17-267ca6975798" || r.Header.Get("Metadata") != "" {
			t.Errorf("%s %s %v", r.Method, r.URL, r.Header)
		}
		if got := r.Header.Get("X-IDENTITY-HEADER"); got != header {
			// Echoed, as a check that Atoll's error never shows it.
			w.WriteHeader(http.StatusUnauthorized)
			fmt.Fprintf(w, `{"error":"unauthorized","error_description":"bad header %s"}`, got)
			return
		}
		if id := q.Get("client_id"); id != "" && id != clientID {
			w.WriteHeader(http.StatusBadRequest)
			fmt.Fprint(w, `{"error":"invalid_request","error_description":"Identity not found"}`)
			return
		}
		n := requests.Add(1)
		// Its numbers are strings, expires_on in seconds since the epoch.
		fmt.Fprintf(w, `{"access_token":"as-tok-%d","expires_on":"%d","resource":"499b84ac-1321-427f-aa17-267ca6975798","token_type":"Bearer","client_id":"%s"}`,
			n, c.Now().Add(time.Hour).Unix(), clientID)
	}))
	t.Cleanup(srv.Close)
	t.Setenv("IDENTITY_ENDPOINT", srv.URL+"/msi/token")
	t.Setenv("IDENTITY_HEADER", header)
	ctx := shortCtx(t)

	cred := &azuredevops.ManagedIdentityCredential{ClientID: clientID, HTTPClient: srv.Client()}
	azuredevops.SetManagedIdentityClock(cred, c.Now)
	if got, err := cred.Authorization(ctx); err != nil || got != "Bearer as-tok-1" {
		t.Fatalf("Authorization = %q, %v; want Bearer as-tok-1", got, err)
	}
	if k := cred.Kind(); k != "App Service" {
		t.Errorf("Kind = %q", k)
	}
	other := &azuredevops.ManagedIdentityCredential{ClientID: "not-assigned", HTTPClient: srv.Client()}
	if _, err := other.Authorization(ctx); atoll.ErrorCode(err) != atoll.EUNAUTHORIZED || !strings.Contains(atoll.ErrorMessage(err), "Identity not found") {
		t.Errorf("unknown identity: %v", err)
	}

	t.Setenv("IDENTITY_HEADER", "stale-"+header)
	stale := &azuredevops.ManagedIdentityCredential{HTTPClient: srv.Client()}
	_, err := stale.Authorization(ctx)
	if atoll.ErrorCode(err) != atoll.EUNAUTHORIZED || strings.Contains(err.Error(), header) {
		t.Errorf("refused header: %v; want EUNAUTHORIZED without the header", err)
	}
}

// IDENTITY_ENDPOINT without IDENTITY_HEADER is Azure Arc's, which Atoll
// does not speak: a clear error, not a request to the wrong place.
func TestManagedIdentityArcRefused(t *testing.T) {
	noManagedIdentityEnv(t)
	t.Setenv("IDENTITY_ENDPOINT", "http://127.0.0.1:1/metadata/identity/oauth2/token")
	_, err := (&azuredevops.ManagedIdentityCredential{}).Authorization(shortCtx(t))
	if atoll.ErrorCode(err) != atoll.EINVALID || !strings.Contains(atoll.ErrorMessage(err), "IDENTITY_HEADER") {
		t.Errorf("err = %v; want EINVALID naming IDENTITY_HEADER", err)
	}
}

// An explicit IMDS endpoint wins over the environment.
func TestManagedIdentityEndpointWins(t *testing.T) {
	noManagedIdentityEnv(t)
	t.Setenv("IDENTITY_ENDPOINT", "http://127.0.0.1:1/msi/token")
	t.Setenv("IDENTITY_HEADER", "h")
	c := newClock()
	var requests atomic.Int64
	srv := fakeIMDS(t, &requests, func() int64 { return c.Now().Add(time.Hour).Unix() })
	cred := &azuredevops.ManagedIdentityCredential{Endpoint: srv.URL + "/metadata/identity/oauth2/token", HTTPClient: srv.Client()}
	if got, err := cred.Authorization(shortCtx(t)); err != nil || got != "Bearer mi-tok-1" {
		t.Errorf("Authorization = %q, %v", got, err)
	}
}
