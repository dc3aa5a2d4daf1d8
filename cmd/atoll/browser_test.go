package main_test

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/chromedp/cdproto/page"
	"github.com/chromedp/chromedp"

	"github.com/atollhq/atoll"
	"github.com/atollhq/atoll/browsertest"
)

// browserTimeout bounds each browser step: generous, since a cold Chromium
// on a busy CI machine is slow.
const browserTimeout = 60 * time.Second

// browser is one headless Chromium tab.
type browser struct {
	t   *testing.T
	ctx context.Context

	mu      sync.Mutex
	dialogs []string // messages of the dialogs accepted
	// console holds the exceptions and errors of the pages' consoles.
	console *browsertest.Console
}

// newBrowser starts Chromium with a fresh profile; it is stopped when the
// test ends. On failure the current page is saved (screenshot and HTML) to a
// directory that the log names.
func newBrowser(t *testing.T) *browser {
	t.Helper()
	ctx := browsertest.Start(t, 1280, 1024)
	b := &browser{t: t, ctx: ctx, console: browsertest.RecordConsole(ctx)}

	// Accept every confirm() (the Unlock button asks one) and record it.
	dialogs := chromedp.Events(ctx, page.JavascriptDialogOpening)
	go func() {
		for ev, err := range dialogs {
			if err != nil {
				return
			}
			b.mu.Lock()
			b.dialogs = append(b.dialogs, ev.Message)
			b.mu.Unlock()
			chromedp.Call(ctx, page.HandleJavaScriptDialog, page.HandleJavaScriptDialogParams{Accept: true})
		}
	}()
	t.Cleanup(b.saveOnFailure)
	return b
}

// saveOnFailure writes a screenshot and the HTML of the current page to a
// directory kept after the test.
func (b *browser) saveOnFailure() {
	if !b.t.Failed() {
		return
	}
	ctx, cancel := context.WithTimeout(b.ctx, 10*time.Second)
	defer cancel()
	dir, err := os.MkdirTemp("", "atoll-browser-test-")
	if err != nil {
		return
	}
	if png, err := chromedp.Run(ctx, chromedp.FullScreenshot(100)); err == nil {
		os.WriteFile(filepath.Join(dir, "page.png"), png, 0o644)
	}
	if html, err := chromedp.Run(ctx, chromedp.Evaluate[string](`location.href + "\n" + document.documentElement.outerHTML`)); err == nil {
		os.WriteFile(filepath.Join(dir, "page.html"), []byte(html), 0o644)
	}
	b.t.Logf("browser state at failure saved in %s", dir)
}

// do runs steps with the step timeout and fails the test on error.
func (b *browser) do(what string, steps ...chromedp.Action[chromedp.Void]) {
	b.t.Helper()
	ctx, cancel := context.WithTimeout(b.ctx, browserTimeout)
	defer cancel()
	if err := chromedp.Do(ctx, steps...); err != nil {
		b.t.Fatalf("%s: %v", what, err)
	}
}

// check evaluates a JavaScript predicate once on the current page.
func (b *browser) check(js string) (bool, error) {
	ctx, cancel := context.WithTimeout(b.ctx, 10*time.Second)
	defer cancel()
	return chromedp.Run(ctx, chromedp.Evaluate[bool](`(() => { try { return !!(`+js+`); } catch (e) { return false; } })()`))
}

// waitFor waits until the JavaScript predicate holds on the current page. It
// evaluates again and again rather than once with Poll, so that the pages'
// own reloads (auto-refresh, after a comment or an unlock) do not break it.
func (b *browser) waitFor(what, js string) {
	b.t.Helper()
	if !b.poll(browserTimeout, js) {
		b.t.Fatalf("timed out waiting for %s; page:\n%s", what, b.pageText())
	}
}

func (b *browser) poll(timeout time.Duration, js string) bool {
	deadline := time.Now().Add(timeout)
	for {
		if ok, err := b.check(js); err == nil && ok {
			return true
		}
		if time.Now().After(deadline) {
			return false
		}
		time.Sleep(100 * time.Millisecond)
	}
}

// clickUntil clicks the first element sel matches until the predicate holds:
// a click can be lost to a page reloading itself at that moment.
func (b *browser) clickUntil(what string, sel chromedp.CSS, js string) {
	b.t.Helper()
	deadline := time.Now().Add(browserTimeout)
	var lastErr error
	for time.Now().Before(deadline) {
		ctx, cancel := context.WithTimeout(b.ctx, 15*time.Second)
		lastErr = chromedp.Do(ctx, chromedp.Click(sel, chromedp.NodeVisible))
		cancel()
		if b.poll(10*time.Second, js) {
			return
		}
	}
	b.t.Fatalf("%s: clicking %s did not lead there (last click error: %v); page:\n%s", what, sel, lastErr, b.pageText())
}

// doUntil runs steps until the JavaScript predicate holds: a live section
// swapped while the steps run replaces the nodes they act on ("could not
// find node"), and the steps are then run again on the new ones.
func (b *browser) doUntil(what, js string, steps ...chromedp.Action[chromedp.Void]) {
	b.t.Helper()
	deadline := time.Now().Add(browserTimeout)
	var lastErr error
	for time.Now().Before(deadline) {
		ctx, cancel := context.WithTimeout(b.ctx, 15*time.Second)
		lastErr = chromedp.Do(ctx, steps...)
		cancel()
		if b.poll(10*time.Second, js) {
			return
		}
	}
	b.t.Fatalf("%s did not lead there (last error: %v); page:\n%s", what, lastErr, b.pageText())
}

// signIn opens url signed out, which must lead to the login form, and
// signs in there as the admin account.
func (b *browser) signIn(url string) {
	b.t.Helper()
	b.do("open "+url+" signed out", chromedp.Navigate(url))
	b.waitFor("the login page", `location.pathname === '/login' && document.querySelector('form[action="/login"] input[name=password]')`)
	b.do("sign in",
		chromedp.SendKeys(chromedp.CSS(`input[name=name]`), "admin", chromedp.NodeVisible),
		chromedp.SendKeys(chromedp.CSS(`input[name=password]`), testAdminPassword, chromedp.NodeVisible),
		chromedp.Click(chromedp.CSS(`form[action="/login"] button[type=submit]`), chromedp.NodeVisible))
	b.waitFor("signed in", `location.pathname !== '/login' && document.querySelector('form.signout')`)
}

// pageText is the current URL and visible text, for failure messages.
func (b *browser) pageText() string {
	ctx, cancel := context.WithTimeout(b.ctx, 10*time.Second)
	defer cancel()
	s, err := chromedp.Run(ctx, chromedp.Evaluate[string](`location.href + "\n" + document.body.innerText`))
	if err != nil {
		return "(unreadable: " + err.Error() + ")"
	}
	return s
}

// jsString quotes s for JavaScript.
func jsString(s string) string { return strconv.Quote(s) }

// atollComment is a predicate: a visible conversation comment by Atoll
// contains every one of texts.
func atollComment(texts ...string) string {
	conds := make([]string, len(texts))
	for i, s := range texts {
		conds[i] = "c.querySelector('.body').innerText.includes(" + jsString(s) + ")"
	}
	return `[...document.querySelectorAll('.comments div.comment')].some(c =>
		c.querySelector('.head b').textContent.trim() === 'atoll' && ` + strings.Join(conds, " && ") + `)`
}

// The newcomer's tour of the demo in a real browser: the index shows the
// seeded pull request, its succeeded autoplan and the staging lock; the pull
// request's page shows Atoll's plan comment; the job page shows Terraform's
// output; the comment box runs a plan; the Unlock button releases a lock.
func TestBrowserDemoTour(t *testing.T) {
	testEnv(t)
	b := newBrowser(t)
	m := startDemo(t, t.TempDir())
	autoplan := demoWaitJob(t, m, atoll.JobPlan, "staging")
	if autoplan.State != atoll.JobSucceeded {
		t.Fatalf("autoplan = %+v", autoplan)
	}
	demoWaitIdle(t, m) // its comment is posted

	// The index: first the login page, then back to it signed in.
	b.signIn(m.URL)
	b.waitFor("index with the demo", `document.title.includes('Atoll') && document.body.innerText.includes('demo/infra')`)
	jobPath := fmt.Sprintf("/jobs/%d", autoplan.ID)
	b.waitFor("the autoplan job succeeded on the index", `[...document.querySelectorAll('tr')].some(r =>
		r.querySelector('a[href="`+jobPath+`"]') && r.innerText.includes('succeeded') && r.innerText.includes('staging'))`)
	b.waitFor("the staging lock on the index", `[...document.querySelectorAll('button[data-unlock]')].some(btn =>
		btn.closest('tr').innerText.includes('staging') && btn.closest('tr').innerText.includes('#1'))`)

	// Through to the pull request: Atoll's plan comment.
	pullPath := "/repos/demo/infra/pulls/1"
	b.clickUntil("open the pull request", chromedp.CSS(`a[href="`+pullPath+`"]`),
		`location.pathname === `+jsString(pullPath)+` && document.querySelector('form.comment-box')`)
	b.waitFor("Atoll's plan comment", atollComment("Plan:", "staging"))

	// The job page: Terraform's output.
	b.clickUntil("open the job", chromedp.CSS(`a[href="`+jobPath+`"]`), `location.pathname === `+jsString(jobPath))
	b.waitFor("the job log", `document.querySelector('#log') &&
		document.querySelector('#log').innerText.includes('terraform_data.app') &&
		document.querySelector('#log').innerText.includes('Plan: ')`)

	// Back on the pull request, plan production with the comment box.
	b.clickUntil("back to the pull request", chromedp.CSS(`.crumbs a[href="`+pullPath+`"]`),
		`location.pathname === `+jsString(pullPath)+` && document.querySelector('form.comment-box')`)
	b.do("write a comment",
		chromedp.SendKeys(chromedp.CSS(`form.comment-box textarea[name=body]`), "atlantis plan -d production", chromedp.NodeVisible),
		chromedp.Click(chromedp.CSS(`form.comment-box button[type=submit]`), chromedp.NodeVisible))
	// The page reloads itself after posting, then while the plan runs.
	if !b.poll(browserTimeout, atollComment("Plan:", "production")) {
		replied := false
		for _, c := range demoComments(t, m) {
			replied = replied || (c.Author == "atoll" && strings.Contains(c.Body, "production"))
		}
		if replied {
			t.Fatalf("Atoll replied to the plan but the page never showed it: it stopped reloading itself before the reply "+
				"(it refreshes only while a job is live, not while the request is queued or reporting); page:\n%s", b.pageText())
		}
		t.Fatalf("timed out waiting for the production plan comment; page:\n%s", b.pageText())
	}
	b.waitFor("the comment box emptied", `document.querySelector('form.comment-box textarea').value === ''`)
	prod := demoWaitJob(t, m, atoll.JobPlan, "production")
	if prod.State != atoll.JobSucceeded {
		t.Fatalf("production plan = %+v", prod)
	}

	// Unlock staging from the index.
	var staging *atoll.Lock
	for _, l := range demoLocks(t, m) {
		if l.Project == "staging" {
			staging = &l
		}
	}
	if staging == nil {
		t.Fatalf("no staging lock: %+v", demoLocks(t, m))
	}
	b.do("open the index", chromedp.Navigate(m.URL))
	unlock := fmt.Sprintf(`button[data-unlock="%d"]`, staging.ID)
	b.waitFor("the staging Unlock button", `document.querySelector('`+unlock+`')`)
	// The button asks confirm(), which the dialog handler accepts; the page
	// then reloads without the lock.
	b.clickUntil("click Unlock", chromedp.CSS(unlock), `document.readyState === 'complete' && !document.querySelector('`+unlock+`')`)
	eventually(t, browserTimeout, "the staging lock released", func() bool {
		for _, l := range demoLocks(t, m) {
			if l.ID == staging.ID {
				return false
			}
		}
		return true
	})
	b.waitFor("the index without the staging lock", `document.readyState === 'complete' && document.body.innerText.includes('production') && !document.querySelector('`+unlock+`')`)
	if locks := demoLocks(t, m); len(locks) != 1 || locks[0].Project != "production" {
		t.Fatalf("locks after unlocking staging = %+v, want production's only", locks)
	}
	b.mu.Lock()
	dialogs := b.dialogs
	b.mu.Unlock()
	problems := b.console.Problems()
	if len(dialogs) != 1 || !strings.Contains(dialogs[0], "staging") {
		t.Errorf("dialogs = %q, want one confirm naming staging", dialogs)
	}
	if len(problems) > 0 {
		t.Errorf("the pages logged errors:\n%s", strings.Join(problems, "\n"))
	}
}
