package azuredevops_test

import (
	"context"
	"encoding/base64"
	"encoding/json"
	"errors"
	"fmt"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/atollhq/atoll"
	"github.com/atollhq/atoll/vcs/azuredevops"
)

func TestPAT(t *testing.T) {
	ctx := context.Background()
	for _, tt := range []struct {
		pat      azuredevops.PAT
		auth     string
		gitUser  string
		password string
	}{
		{azuredevops.PAT{Token: "tok"}, "Basic " + base64.StdEncoding.EncodeToString([]byte(":tok")), "atoll", "tok"},
		{azuredevops.PAT{User: "me@example.com", Token: "tok"}, "Basic " + base64.StdEncoding.EncodeToString([]byte("me@example.com:tok")), "me@example.com", "tok"},
	} {
		auth, err := tt.pat.Authorization(ctx)
		if err != nil || auth != tt.auth {
			t.Errorf("%+v: Authorization = %q, %v, want %q", tt.pat, auth, err, tt.auth)
		}
		user, pass, err := tt.pat.GitAuth(ctx)
		if err != nil || user != tt.gitUser || pass != tt.password {
			t.Errorf("%+v: GitAuth = %q, %q, %v", tt.pat, user, pass, err)
		}
	}
}

// clock is a settable time.
type clock struct {
	mu  sync.Mutex
	now time.Time
}

func newClock() *clock { return &clock{now: time.Date(2026, 1, 2, 3, 4, 5, 0, time.UTC)} }

func (c *clock) Now() time.Time {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.now
}

func (c *clock) Advance(d time.Duration) {
	c.mu.Lock()
	defer c.mu.Unlock()
	c.now = c.now.Add(d)
}

const (
	tenant       = "tenant-1"
	clientID     = "11111111-2222-3333-4444-555555555555"
	clientSecret = "client-s3cret~value"
)

// fakeEntra is Microsoft Entra ID's token endpoint for one service
// principal. It checks the form and hands out tok-1, tok-2, ...
type fakeEntra struct {
	t         *testing.T
	srv       *httptest.Server
	expiresIn atomic.Int64
	requests  atomic.Int64
	fail      atomic.Bool   // answer 500
	block     chan struct{} // if set, requests wait for it to close
	arrived   chan struct{} // a request arrived (buffered)
}

func newFakeEntra(t *testing.T) *fakeEntra {
	f := &fakeEntra{t: t, arrived: make(chan struct{}, 100)}
	f.expiresIn.Store(3600)
	f.srv = httptest.NewServer(http.HandlerFunc(f.serve))
	t.Cleanup(f.srv.Close)
	return f
}

func (f *fakeEntra) serve(w http.ResponseWriter, r *http.Request) {
	f.arrived <- struct{}{}
	if f.block != nil {
		<-f.block
	}
	w.Header().Set("Content-Type", "application/json")
	if r.Method != http.MethodPost || r.URL.Path != "/"+tenant+"/oauth2/v2.0/token" {
		w.WriteHeader(http.StatusNotFound)
		fmt.Fprintf(w, `{"error":"invalid_request","error_description":"AADSTS90002: Tenant or path %s not found."}`, r.URL.Path)
		return
	}
	if ct := r.Header.Get("Content-Type"); ct != "application/x-www-form-urlencoded" {
		f.t.Errorf("Content-Type %q", ct)
	}
	if err := r.ParseForm(); err != nil {
		f.t.Error(err)
	}
	if r.PostForm.Get("grant_type") != "client_credentials" || r.PostForm.Get("client_id") != clientID ||
		r.PostForm.Get("scope") != "499b84ac-1321-427f-aa17-267ca6975798/.default" {
		f.t.Errorf("form %v", r.PostForm)
	}
	if r.URL.RawQuery != "" {
		f.t.Errorf("query %q: the secret belongs in the body", r.URL.RawQuery)
	}
	if f.fail.Load() {
		w.WriteHeader(http.StatusInternalServerError)
		fmt.Fprint(w, `upstream trouble`)
		return
	}
	if s := r.PostForm.Get("client_secret"); s != clientSecret {
		w.WriteHeader(http.StatusUnauthorized)
		// Entra ID's answer to a wrong secret, with its trailer lines; this
		// fake also echoes the secret to check that errors never show it.
		json.NewEncoder(w).Encode(map[string]any{
			"error":             "invalid_client",
			"error_description": "AADSTS7000215: Invalid client secret provided (" + s + ").\r\nTrace ID: 0a1b\r\nCorrelation ID: 2c3d\r\nTimestamp: 2026-01-02 03:04:05Z",
			"error_codes":       []int{7000215},
		})
		return
	}
	n := f.requests.Add(1)
	json.NewEncoder(w).Encode(map[string]any{
		"token_type":     "Bearer",
		"expires_in":     f.expiresIn.Load(),
		"ext_expires_in": f.expiresIn.Load(),
		"access_token":   fmt.Sprintf("tok-%d", n),
	})
}

func (f *fakeEntra) credential(c *clock, secret string) *azuredevops.EntraCredential {
	cred := &azuredevops.EntraCredential{TenantID: tenant, ClientID: clientID, ClientSecret: secret,
		AuthorityURL: f.srv.URL + "/", HTTPClient: f.srv.Client()}
	azuredevops.SetEntraClock(cred, c.Now)
	return cred
}

func wantAuth(t *testing.T, cred azuredevops.Credential, want string) {
	t.Helper()
	got, err := cred.Authorization(context.Background())
	if err != nil || got != "Bearer "+want {
		t.Fatalf("Authorization = %q, %v, want Bearer %s", got, err, want)
	}
}

func TestEntraMintsAndCaches(t *testing.T) {
	f := newFakeEntra(t)
	cred := f.credential(newClock(), clientSecret)
	for range 10 {
		wantAuth(t, cred, "tok-1")
	}
	user, pass, err := cred.GitAuth(context.Background())
	if err != nil || user != "atoll" || pass != "tok-1" {
		t.Errorf("GitAuth = %q, %q, %v", user, pass, err)
	}
	if n := f.requests.Load(); n != 1 {
		t.Errorf("%d token requests, want 1", n)
	}
}

func TestEntraRefreshesBeforeExpiry(t *testing.T) {
	for _, tt := range []struct {
		name      string
		expiresIn int64
		keep      time.Duration // still cached this long after minting
		renew     time.Duration // renewed from then on
	}{
		{"an hour's token, five minutes before", 3600, 54*time.Minute + 59*time.Second, 55 * time.Minute},
		// A token shorter than ten minutes is renewed halfway.
		{"a two minutes' token, halfway", 120, 59 * time.Second, 60 * time.Second},
	} {
		t.Run(tt.name, func(t *testing.T) {
			f := newFakeEntra(t)
			f.expiresIn.Store(tt.expiresIn)
			c := newClock()
			cred := f.credential(c, clientSecret)
			wantAuth(t, cred, "tok-1")
			c.Advance(tt.keep)
			wantAuth(t, cred, "tok-1")
			c.Advance(tt.renew - tt.keep)
			wantAuth(t, cred, "tok-2")
			wantAuth(t, cred, "tok-2")
			if n := f.requests.Load(); n != 2 {
				t.Errorf("%d token requests, want 2", n)
			}
		})
	}
}

func TestEntraConcurrentCallersShareOneRequest(t *testing.T) {
	f := newFakeEntra(t)
	f.block = make(chan struct{})
	cred := f.credential(newClock(), clientSecret)

	const callers = 20
	var started, done sync.WaitGroup
	results := make([]string, callers)
	errs := make([]error, callers)
	started.Add(callers)
	done.Add(callers)
	for i := range callers {
		go func() {
			defer done.Done()
			started.Done()
			results[i], errs[i] = cred.Authorization(context.Background())
		}()
	}
	started.Wait()
	<-f.arrived // the one request is under way; the others wait for it
	close(f.block)
	done.Wait()
	for i := range callers {
		if errs[i] != nil || results[i] != "Bearer tok-1" {
			t.Errorf("caller %d: %q, %v", i, results[i], errs[i])
		}
	}
	if n := f.requests.Load(); n != 1 {
		t.Errorf("%d token requests, want 1", n)
	}
}

// A caller that gives up does not fail the others waiting for the same
// request.
func TestEntraCallerGivingUpLeavesTheRequest(t *testing.T) {
	f := newFakeEntra(t)
	f.block = make(chan struct{})
	cred := f.credential(newClock(), clientSecret)

	ctx, cancel := context.WithCancel(context.Background())
	first := make(chan error, 1)
	go func() {
		_, err := cred.Authorization(ctx)
		first <- err
	}()
	<-f.arrived
	cancel()
	if err := <-first; !errors.Is(err, context.Canceled) {
		t.Fatalf("canceled caller: %v", err)
	}
	second := make(chan string, 1)
	go func() {
		auth, _ := cred.Authorization(context.Background())
		second <- auth
	}()
	close(f.block)
	if auth := <-second; auth != "Bearer tok-1" {
		t.Errorf("second caller got %q", auth)
	}
	if n := f.requests.Load(); n != 1 {
		t.Errorf("%d token requests, want 1", n)
	}
}

func TestEntraWrongSecret(t *testing.T) {
	f := newFakeEntra(t)
	const wrong = "wrong-s3cret~value"
	cred := f.credential(newClock(), wrong)
	_, err := cred.Authorization(context.Background())
	if atoll.ErrorCode(err) != atoll.EUNAUTHORIZED {
		t.Fatalf("got %v, want EUNAUTHORIZED", err)
	}
	msg := atoll.ErrorMessage(err)
	for _, want := range []string{"invalid_client", "AADSTS7000215: Invalid client secret provided", clientID, tenant} {
		if !strings.Contains(msg, want) {
			t.Errorf("message %q lacks %q", msg, want)
		}
	}
	for _, bad := range []string{wrong, "Trace ID"} {
		if strings.Contains(err.Error(), bad) {
			t.Errorf("error %q shows %q", err, bad)
		}
	}
	if _, _, err := cred.GitAuth(context.Background()); atoll.ErrorCode(err) != atoll.EUNAUTHORIZED {
		t.Errorf("GitAuth: %v", err)
	}
}

func TestEntraErrors(t *testing.T) {
	f := newFakeEntra(t)
	ctx := context.Background()

	f.fail.Store(true)
	_, err := f.credential(newClock(), clientSecret).Authorization(ctx)
	if atoll.ErrorCode(err) != atoll.EUNAVAILABLE || strings.Contains(err.Error(), clientSecret) {
		t.Errorf("server error: got %v, want EUNAVAILABLE without the secret", err)
	}
	f.fail.Store(false)

	cred := f.credential(newClock(), clientSecret)
	cred.TenantID = "other-tenant"
	if _, err := cred.Authorization(ctx); atoll.ErrorCode(err) != atoll.EUNAUTHORIZED && atoll.ErrorCode(err) != atoll.EUNAVAILABLE {
		t.Errorf("unknown tenant: got %v", err)
	}

	before := len(f.arrived)
	missing := &azuredevops.EntraCredential{TenantID: tenant, ClientID: clientID, AuthorityURL: f.srv.URL}
	if _, err := missing.Authorization(ctx); atoll.ErrorCode(err) != atoll.EINVALID {
		t.Errorf("no secret: got %v, want EINVALID", err)
	}
	if len(f.arrived) != before {
		t.Error("a credential without a secret sent a request")
	}
}

// When a renewal fails while the old token is still valid, the old one is
// used; once it has expired the failure shows.
func TestEntraRenewalFailureKeepsValidToken(t *testing.T) {
	f := newFakeEntra(t)
	c := newClock()
	cred := f.credential(c, clientSecret)
	wantAuth(t, cred, "tok-1")
	f.fail.Store(true)
	c.Advance(58 * time.Minute)
	wantAuth(t, cred, "tok-1")
	c.Advance(3 * time.Minute)
	if _, err := cred.Authorization(context.Background()); atoll.ErrorCode(err) != atoll.EUNAVAILABLE {
		t.Errorf("after expiry: got %v, want the renewal's error", err)
	}
	f.fail.Store(false)
	wantAuth(t, cred, "tok-2")
}

func TestEntraInvalidate(t *testing.T) {
	f := newFakeEntra(t)
	cred := f.credential(newClock(), clientSecret)
	wantAuth(t, cred, "tok-1")
	cred.Invalidate("Bearer some-other-token") // not ours: kept
	wantAuth(t, cred, "tok-1")
	cred.Invalidate("Bearer tok-1")
	wantAuth(t, cred, "tok-2")
}

// fakeIMDS is the Instance Metadata Service's token endpoint.
func fakeIMDS(t *testing.T, requests *atomic.Int64, expiresOn func() int64) *httptest.Server {
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Content-Type", "application/json")
		if r.Header.Get("Metadata") != "true" {
			w.WriteHeader(http.StatusBadRequest)
			fmt.Fprint(w, `{"error":"invalid_request","error_description":"Required metadata header not specified"}`)
			return
		}
		q := r.URL.Query()
		if r.Method != http.MethodGet || r.URL.Path != "/metadata/identity/oauth2/token" ||
			q.Get("api-version") != "2018-02-01" || q.Get("resource") != "499b84ac-1321-427f-aa17-267ca6975798" {
			t.Errorf("%s %s", r.Method, r.URL)
		}
		if q.Get("client_id") != "" && q.Get("client_id") != clientID {
			w.WriteHeader(http.StatusBadRequest)
			fmt.Fprint(w, `{"error":"invalid_request","error_description":"Identity not found"}`)
			return
		}
		n := requests.Add(1)
		// IMDS writes its numbers as strings.
		fmt.Fprintf(w, `{"access_token":"mi-tok-%d","expires_on":"%d","resource":"499b84ac-1321-427f-aa17-267ca6975798","token_type":"Bearer"}`, n, expiresOn())
	}))
	t.Cleanup(srv.Close)
	return srv
}

func TestManagedIdentity(t *testing.T) {
	c := newClock()
	var requests atomic.Int64
	srv := fakeIMDS(t, &requests, func() int64 { return c.Now().Add(time.Hour).Unix() })
	endpoint := srv.URL + "/metadata/identity/oauth2/token"

	cred := &azuredevops.ManagedIdentityCredential{ClientID: clientID, Endpoint: endpoint, HTTPClient: srv.Client()}
	azuredevops.SetManagedIdentityClock(cred, c.Now)
	for range 5 {
		wantAuth(t, cred, "mi-tok-1")
	}
	user, pass, err := cred.GitAuth(context.Background())
	if err != nil || user != "atoll" || pass != "mi-tok-1" {
		t.Errorf("GitAuth = %q, %q, %v", user, pass, err)
	}
	c.Advance(56 * time.Minute)
	wantAuth(t, cred, "mi-tok-2")
	if n := requests.Load(); n != 2 {
		t.Errorf("%d token requests, want 2", n)
	}

	other := &azuredevops.ManagedIdentityCredential{ClientID: "not-assigned", Endpoint: endpoint, HTTPClient: srv.Client()}
	_, err = other.Authorization(context.Background())
	if atoll.ErrorCode(err) != atoll.EUNAUTHORIZED || !strings.Contains(atoll.ErrorMessage(err), "Identity not found") {
		t.Errorf("unknown identity: got %v", err)
	}
}
