package web_test

import (
	"context"
	"net/http"
	"net/http/httptest"
	"net/url"
	"strconv"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/chromedp/cdproto/cdp"
	"github.com/chromedp/cdproto/network"
	"github.com/chromedp/chromedp"
)

// A real browser signing in with a hostile next= (each of hostileNexts,
// pointed at a second local server standing in for the attacker's) ends on
// Atoll's "/", never on the other server: first through the login form,
// then through the login page of a signed-in user, which redirects at once.
// (Chromium also stops the form's redirect to another origin by the CSP's
// form-action; the signed-in login page has no such second line.)
func TestSecurityLoginRedirectBrowser(t *testing.T) {
	f := newAuthFixture(t, nil)
	var evilHits atomic.Int64
	evil := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if r.URL.Path != "/favicon.ico" { // asked for later, maybe during the next step
			evilHits.Add(1)
		}
		w.Header().Set("Content-Type", "text/html")
		w.Write([]byte("<!doctype html><title>evil</title>"))
	}))
	t.Cleanup(evil.Close)
	evilHost := strings.TrimPrefix(evil.URL, "http://")
	b := openBrowser(t)
	home := f.srv.URL + "/"

	for _, hostile := range hostileVariants() {
		v := strings.ReplaceAll(strings.ReplaceAll(hostile, "https://", "http://"), "evil.example", evilHost)
		loginPage := f.srv.URL + "/login?next=" + url.QueryEscape(v)
		hits := evilHits.Load()
		escaped := func() bool { return evilHits.Load() > hits }
		b.run("sign out and open the login page, next="+strconv.Quote(v),
			clearCookies,
			chromedp.Navigate(loginPage),
			chromedp.SetValue(`input[name="name"]`, "viewer-user"),
			chromedp.SetValue(`input[name="password"]`, testPassword),
			// A mark the next document lacks: it tells when the form's
			// answer has been followed.
			chromedp.Evaluate[chromedp.Void](`window.loginPage = true`),
			chromedp.Click(`form[action="/login"] button[type="submit"]`),
		)
		checkLanded(t, b, "the login form with next="+strconv.Quote(v), home, `!window.loginPage`, escaped)

		hits = evilHits.Load()
		// Navigate fails on a page load error, which an unchecked next
		// can cause: an error here, not the end of the test.
		ctx, cancel := context.WithTimeout(b.ctx, 30*time.Second)
		err := chromedp.Do(ctx, chromedp.Navigate(loginPage))
		cancel()
		if err != nil {
			t.Errorf("the signed-in login page with next=%q: %v", v, err)
			continue
		}
		checkLanded(t, b, "the signed-in login page with next="+strconv.Quote(v), home, `true`, escaped)
	}
}

// checkLanded waits until the browser has left the page it was on (left,
// a JavaScript expression) and loaded the next, then fails unless that
// is want; escaped reports a visit to the attacker's server.
func checkLanded(t *testing.T, b *browser, what, want, left string, escaped func() bool) {
	t.Helper()
	deadline := time.Now().Add(15 * time.Second)
	for time.Now().Before(deadline) {
		if escaped() {
			t.Errorf("after %s: the browser went to the other server", what)
			return
		}
		ctx, cancel := context.WithTimeout(b.ctx, 2*time.Second)
		href, err := chromedp.Run(ctx, chromedp.Evaluate[string](`(`+left+`) && document.readyState === "complete" ? location.href : ""`))
		cancel()
		if err == nil && href != "" {
			if href != want {
				t.Errorf("after %s: the browser is at %q, want %q", what, href, want)
			}
			return
		}
		time.Sleep(100 * time.Millisecond)
	}
	// Chromium stops a form's redirect to another origin (CSP
	// form-action) and shows an error page of its own.
	ctx, cancel := context.WithTimeout(b.ctx, 2*time.Second)
	defer cancel()
	href, err := chromedp.Run(ctx, chromedp.Evaluate[string](`location.href`))
	t.Errorf("after %s: no page of Atoll's loaded (the browser is at %q, %v)", what, href, err)
}

// clearCookies signs the browser out: it forgets every cookie.
var clearCookies = chromedp.Func(func(ctx context.Context, t *chromedp.Target) error {
	_, err := cdp.Call(ctx, t, network.ClearBrowserCookies, cdp.Empty{})
	return err
})
