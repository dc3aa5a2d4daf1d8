package web_test

import (
	"bytes"
	"context"
	"crypto/rand"
	"crypto/rsa"
	"crypto/sha256"
	"database/sql"
	"encoding/base64"
	"encoding/json"
	"net/http"
	"net/http/httptest"
	"net/url"
	"os"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/go-jose/go-jose/v4"

	"github.com/atollhq/atoll"
	"github.com/atollhq/atoll/web"
)

// oidcProvider is an OpenID Connect provider in the test process, speaking
// the real wire format: discovery, JWKS, an authorization endpoint that
// approves at once, and a token endpoint that checks the client secret and
// PKCE and issues an RS256-signed ID token.
type oidcProvider struct {
	srv          *httptest.Server
	key          *rsa.PrivateKey
	clientID     string
	clientSecret string
	subject      string
	email        string

	mu    sync.Mutex
	codes map[string]authorization
	// Tamper with the next ID tokens.
	audience, nonce string
	// extra claims of the ID tokens.
	extra map[string]any
}

type authorization struct{ nonce, challenge, redirectURI string }

func newOIDCProvider(t *testing.T) *oidcProvider {
	t.Helper()
	key, err := rsa.GenerateKey(rand.Reader, 2048)
	if err != nil {
		t.Fatal(err)
	}
	p := &oidcProvider{key: key, clientID: "atoll-client", clientSecret: "oidc-client-secret-value", subject: "user-123",
		email: "dana@example.com", codes: map[string]authorization{}}
	mux := http.NewServeMux()
	mux.HandleFunc("GET /.well-known/openid-configuration", func(w http.ResponseWriter, r *http.Request) {
		json.NewEncoder(w).Encode(map[string]any{
			"issuer": p.srv.URL, "authorization_endpoint": p.srv.URL + "/authorize", "token_endpoint": p.srv.URL + "/token",
			"jwks_uri": p.srv.URL + "/jwks", "response_types_supported": []string{"code"}, "subject_types_supported": []string{"public"},
			"id_token_signing_alg_values_supported": []string{"RS256"}, "code_challenge_methods_supported": []string{"S256"},
		})
	})
	mux.HandleFunc("GET /jwks", func(w http.ResponseWriter, r *http.Request) {
		json.NewEncoder(w).Encode(jose.JSONWebKeySet{Keys: []jose.JSONWebKey{{Key: &key.PublicKey, KeyID: "k1", Algorithm: "RS256", Use: "sig"}}})
	})
	mux.HandleFunc("GET /authorize", func(w http.ResponseWriter, r *http.Request) {
		q := r.URL.Query()
		if q.Get("client_id") != p.clientID || q.Get("response_type") != "code" || q.Get("code_challenge_method") != "S256" || q.Get("nonce") == "" {
			http.Error(w, "bad authorization request", 400)
			return
		}
		code, _ := atoll.NewSecret()
		p.mu.Lock()
		p.codes[code] = authorization{nonce: q.Get("nonce"), challenge: q.Get("code_challenge"), redirectURI: q.Get("redirect_uri")}
		p.mu.Unlock()
		http.Redirect(w, r, q.Get("redirect_uri")+"?"+url.Values{"code": {code}, "state": {q.Get("state")}}.Encode(), http.StatusFound)
	})
	mux.HandleFunc("POST /token", func(w http.ResponseWriter, r *http.Request) {
		id, secret, ok := r.BasicAuth()
		if !ok {
			id, secret = r.PostFormValue("client_id"), r.PostFormValue("client_secret")
		}
		p.mu.Lock()
		a, found := p.codes[r.PostFormValue("code")]
		delete(p.codes, r.PostFormValue("code"))
		aud, nonce := p.audience, p.nonce
		p.mu.Unlock()
		sum := sha256.Sum256([]byte(r.PostFormValue("code_verifier")))
		if id != p.clientID || secret != p.clientSecret || !found || r.PostFormValue("redirect_uri") != a.redirectURI ||
			base64.RawURLEncoding.EncodeToString(sum[:]) != a.challenge {
			w.Header().Set("Content-Type", "application/json")
			w.WriteHeader(400)
			w.Write([]byte(`{"error":"invalid_grant"}`))
			return
		}
		if aud == "" {
			aud = p.clientID
		}
		if nonce == "" {
			nonce = a.nonce
		}
		now := time.Now()
		all := map[string]any{"iss": p.srv.URL, "sub": p.subject, "aud": aud, "iat": now.Unix(),
			"exp": now.Add(time.Hour).Unix(), "nonce": nonce, "email": p.email, "email_verified": true}
		for k, v := range p.extra {
			all[k] = v
		}
		claims, _ := json.Marshal(all)
		signer, err := jose.NewSigner(jose.SigningKey{Algorithm: jose.RS256, Key: jose.JSONWebKey{Key: key, KeyID: "k1"}}, (&jose.SignerOptions{}).WithType("JWT"))
		if err != nil {
			http.Error(w, err.Error(), 500)
			return
		}
		jws, err := signer.Sign(claims)
		if err != nil {
			http.Error(w, err.Error(), 500)
			return
		}
		raw, _ := jws.CompactSerialize()
		w.Header().Set("Content-Type", "application/json")
		json.NewEncoder(w).Encode(map[string]any{"access_token": "at-" + raw[:8], "token_type": "Bearer", "expires_in": 3600, "id_token": raw})
	})
	p.srv = httptest.NewServer(mux)
	t.Cleanup(p.srv.Close)
	return p
}

// oidcSignIn runs the browser's part of the flow and returns the callback's
// answer; tamper may change the callback URL.
func oidcSignIn(t *testing.T, atollURL string, tamper func(u *url.URL)) *http.Response {
	t.Helper()
	return oidcSignInNext(t, atollURL, "/jobs/1", tamper)
}

// oidcSignInNext is oidcSignIn starting from /auth/oidc/login?next=next.
func oidcSignInNext(t *testing.T, atollURL, next string, tamper func(u *url.URL)) *http.Response {
	t.Helper()
	res, err := noRedirects.Get(atollURL + "/auth/oidc/login?next=" + url.QueryEscape(next))
	if err != nil {
		t.Fatal(err)
	}
	res.Body.Close()
	var state *http.Cookie
	for _, c := range res.Cookies() {
		if c.Name == "atoll_oidc" {
			state = c
		}
	}
	if res.StatusCode != http.StatusFound || state == nil || !state.HttpOnly || state.MaxAge <= 0 || state.MaxAge > 600 {
		t.Fatalf("oidc login: %d, state cookie %+v", res.StatusCode, state)
	}
	res, err = noRedirects.Get(res.Header.Get("Location"))
	if err != nil {
		t.Fatal(err)
	}
	res.Body.Close()
	if res.StatusCode != http.StatusFound {
		t.Fatalf("provider authorize: %d", res.StatusCode)
	}
	callback, _ := url.Parse(res.Header.Get("Location"))
	if tamper != nil {
		tamper(callback)
	}
	req, _ := http.NewRequest("GET", callback.String(), nil)
	req.AddCookie(&http.Cookie{Name: state.Name, Value: state.Value})
	res, err = noRedirects.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	return res
}

func TestOIDCSignIn(t *testing.T) {
	p := newOIDCProvider(t)
	newAtoll := func(t *testing.T) *authFixture {
		return newAuthFixture(t, func(s *web.Server) {
			s.OIDC = &web.OIDC{Issuer: p.srv.URL, ClientID: p.clientID, ClientSecret: p.clientSecret, OperatorUsers: []string{"dana@example.com"}}
		})
	}
	userCount := func(f *authFixture) int {
		users, err := f.db.Users(context.Background())
		if err != nil {
			t.Fatal(err)
		}
		return len(users)
	}

	t.Run("success", func(t *testing.T) {
		f := newAtoll(t)
		if _, page := f.do(t, "GET", "/login", ""); !strings.Contains(page, "/auth/oidc/login") {
			t.Error("the login page lacks the OIDC button")
		}
		res := oidcSignIn(t, f.srv.URL, nil)
		res.Body.Close()
		c := sessionCookieOf(res)
		if res.StatusCode != http.StatusSeeOther || res.Header.Get("Location") != "/jobs/1" || c == nil || !c.HttpOnly {
			t.Fatalf("callback: %d %q cookie %+v", res.StatusCode, res.Header.Get("Location"), c)
		}
		res2, body := f.do(t, "GET", "/api/v1/me", "", "Cookie", "atoll_session="+c.Value)
		if res2.StatusCode != 200 || !strings.Contains(body, `"dana@example.com"`) || !strings.Contains(body, `"operator"`) || !strings.Contains(body, `"oidc"`) {
			t.Fatalf("me: %d %s", res2.StatusCode, body)
		}
		if n := countRows(t, f.db.Path, "sessions"); n != 1 {
			t.Errorf("sessions = %d, want 1", n)
		}
		// Signing in again finds the same user.
		oidcSignIn(t, f.srv.URL, nil).Body.Close()
		if n := userCount(f); n != 4 {
			t.Errorf("users = %d, want the 3 local ones and dana", n)
		}
		events, _ := f.db.Events(context.Background(), 1)
		if len(events) != 1 || events[0].Action != "login" || events[0].Actor != "dana@example.com" || !strings.Contains(events[0].Detail, "oidc") {
			t.Errorf("event = %+v", events)
		}
		f.srv.Close()
		f.db.Close()
		for _, path := range []string{f.db.Path, f.db.Path + "-wal"} {
			b, _ := os.ReadFile(path)
			if bytes.Contains(b, []byte(p.clientSecret)) {
				t.Errorf("%s holds the client secret", path)
			}
		}
		if f.logs.mu.Lock(); bytes.Contains(f.logs.buf.Bytes(), []byte(p.clientSecret)) {
			t.Error("the logs hold the client secret")
		}
		f.logs.mu.Unlock()
	})

	refused := []struct {
		name   string
		setup  func()
		tamper func(*url.URL)
	}{
		{"bad state", nil, func(u *url.URL) {
			q := u.Query()
			q.Set("state", "forged")
			u.RawQuery = q.Encode()
		}},
		{"bad nonce", func() { p.nonce = "another-nonce" }, nil},
		{"wrong audience", func() { p.audience = "another-client" }, nil},
		{"provider error", nil, func(u *url.URL) {
			q := u.Query()
			q.Set("error", "access_denied")
			u.RawQuery = q.Encode()
		}},
	}
	for _, c := range refused {
		t.Run(c.name, func(t *testing.T) {
			f := newAtoll(t)
			p.mu.Lock()
			p.nonce, p.audience = "", ""
			if c.setup != nil {
				c.setup()
			}
			p.mu.Unlock()
			res := oidcSignIn(t, f.srv.URL, c.tamper)
			res.Body.Close()
			if res.StatusCode != http.StatusUnauthorized || sessionCookieOf(res) != nil && sessionCookieOf(res).Value != "" {
				t.Fatalf("callback: %d, cookie %+v", res.StatusCode, sessionCookieOf(res))
			}
			if n := userCount(f); n != 3 {
				t.Errorf("users = %d: a user was created", n)
			}
			events, _ := f.db.Events(context.Background(), 1)
			if len(events) != 1 || events[0].Action != "login_failed" {
				t.Errorf("event = %+v", events)
			}
			if n := countRows(t, f.db.Path, "sessions"); n != 0 {
				t.Errorf("sessions = %d: one was created", n)
			}
		})
	}
}

// countRows counts a table's rows by reading the database file directly.
func countRows(t *testing.T, path, table string) int {
	t.Helper()
	db, err := sql.Open("sqlite", "file:"+path+"?mode=ro")
	if err != nil {
		t.Fatal(err)
	}
	defer db.Close()
	var n int
	if err := db.QueryRow("SELECT COUNT(*) FROM " + table).Scan(&n); err != nil {
		t.Fatal(err)
	}
	return n
}
