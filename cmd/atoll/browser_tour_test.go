package main_test

import (
	"context"
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/chromedp/chromedp"

	"github.com/atollhq/atoll"
)

// tourGate is a Terraform remote state served over HTTP that answers only
// once the test opens it: a plan reading it has written its first lines
// and waits there, still running, so the test can watch the rest arrive.
type tourGate struct {
	URL  string
	hit  chan struct{} // closed at the first read
	open chan struct{}

	hitOnce, openOnce sync.Once
}

func newTourGate(t *testing.T) *tourGate {
	g := &tourGate{hit: make(chan struct{}), open: make(chan struct{})}
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		g.hitOnce.Do(func() { close(g.hit) })
		select {
		case <-g.open:
		case <-r.Context().Done():
			return
		}
		w.Header().Set("Content-Type", "application/json")
		io.WriteString(w, `{"version":4,"terraform_version":"1.5.7","serial":1,"lineage":"tour-gate","outputs":{},"resources":[]}`)
	}))
	// Cleanups run last-registered first: the gate opens before the server
	// waits for its requests to end.
	t.Cleanup(srv.Close)
	t.Cleanup(g.release)
	g.URL = srv.URL + "/state"
	return g
}

func (g *tourGate) release() { g.openOnce.Do(func() { close(g.open) }) }

// tourPushGate pushes to the demo pull request's branch a change of
// production that reads the gate (data.terraform_remote_state.tourgate),
// as a developer would: clone, commit, push.
func tourPushGate(t *testing.T, demoRepo, gateURL string) {
	t.Helper()
	clone := &gitRepo{t: t, Dir: t.TempDir()}
	clone.git("clone", "--quiet", "--branch", "scale-staging", demoRepo, ".")
	tf, err := os.ReadFile(filepath.Join(clone.Dir, "production", "main.tf"))
	if err != nil {
		t.Fatal(err)
	}
	clone.commit("Production reads the release gate", map[string]string{"production/main.tf": string(tf) + fmt.Sprintf(`
data "terraform_remote_state" "tourgate" {
  backend = "http"
  config = {
    address = %q
  }
}
`, gateURL)})
	clone.git("push", "--quiet", "origin", "scale-staging")
}

// tourShots is where the tour's screenshots go: $ATOLL_SCREENSHOTS, else
// screenshots/ at the repository's root (git-ignored).
func tourShots(t *testing.T) string {
	t.Helper()
	dir := os.Getenv("ATOLL_SCREENSHOTS")
	if dir == "" {
		dir = filepath.Join("..", "..", "screenshots")
	}
	dir, err := filepath.Abs(dir)
	if err != nil {
		t.Fatal(err)
	}
	if err := os.MkdirAll(dir, 0o755); err != nil {
		t.Fatal(err)
	}
	t.Logf("screenshots in %s", dir)
	return dir
}

// tourShot saves a screenshot of the whole current page as dir/name.png.
func tourShot(b *browser, dir, name string) {
	b.t.Helper()
	ctx, cancel := context.WithTimeout(b.ctx, browserTimeout)
	defer cancel()
	png, err := chromedp.Run(ctx, chromedp.FullScreenshot(100))
	if err != nil {
		b.t.Fatalf("screenshot %s: %v", name, err)
	}
	if err := os.WriteFile(filepath.Join(dir, name+".png"), png, 0o644); err != nil {
		b.t.Fatal(err)
	}
}

// tourString waits until the JavaScript expression is a non-empty string on
// the current page and returns it.
func tourString(b *browser, what, js string) string {
	b.t.Helper()
	deadline := time.Now().Add(browserTimeout)
	for {
		ctx, cancel := context.WithTimeout(b.ctx, 10*time.Second)
		s, err := chromedp.Run(ctx, chromedp.Evaluate[string](`(() => { try { return String((`+js+`) || ''); } catch (e) { return ''; } })()`))
		cancel()
		if err == nil && s != "" {
			return s
		}
		if time.Now().After(deadline) {
			b.t.Fatalf("timed out waiting for %s; page:\n%s", what, b.pageText())
		}
		time.Sleep(100 * time.Millisecond)
	}
}

// tourReloadUntil reloads the page until the predicate holds: for what the
// page shows only when it is loaded again (the conversation of an idle
// pull request, a search result).
func tourReloadUntil(b *browser, what, js string) {
	b.t.Helper()
	deadline := time.Now().Add(2 * browserTimeout)
	for !b.poll(5*time.Second, js) {
		if time.Now().After(deadline) {
			b.t.Fatalf("timed out waiting for %s; page:\n%s", what, b.pageText())
		}
		// A reload fails when the page is navigating at that moment: the
		// next round reloads again.
		ctx, cancel := context.WithTimeout(b.ctx, browserTimeout)
		chromedp.Do(ctx, chromedp.Reload())
		cancel()
	}
}

// tourRow is a JavaScript expression: the pull request page's project row
// (article) of project name.
func tourRow(name string) string {
	return `[...document.querySelectorAll('#projects article.project')].find(a => a.querySelector('h3').textContent.trim() === ` + jsString(name) + `)`
}

// tourNarrow checks that the current page fits 400 px (no horizontal
// scrolling) and saves its screenshot at that width.
func tourNarrow(b *browser, dir, name string) {
	b.t.Helper()
	b.do("emulate a 400 px wide screen", chromedp.EmulateViewport(400, 900))
	b.waitFor(name+" laid out at 400 px", `window.innerWidth === 400`)
	ctx, cancel := context.WithTimeout(b.ctx, 10*time.Second)
	widths, err := chromedp.Run(ctx, chromedp.Evaluate[string](`(() => {
		const wide = [...document.querySelectorAll('body *')].filter(e => e.getBoundingClientRect().right > 402)
			.slice(0, 5).map(e => e.tagName.toLowerCase() + (e.id ? '#' + e.id : '') + (e.className && typeof e.className === 'string' ? '.' + e.className.trim().split(/\s+/).join('.') : '') + ' right=' + Math.round(e.getBoundingClientRect().right));
		return document.documentElement.scrollWidth + ' ' + document.body.scrollWidth + ' ' + wide.join(', ');
	})()`))
	cancel()
	if err != nil {
		b.t.Fatalf("%s: measure: %v", name, err)
	}
	tourShot(b, dir, name)
	var doc, body int
	fmt.Sscan(widths, &doc, &body)
	if doc > 402 || body > 402 {
		b.t.Errorf("%s overflows 400 px: document %d px, body %d px wide; widest: %s", name, doc, body, widths)
	}
	b.do("back to the desktop width", chromedp.EmulateReset())
}

// The control plane in a real browser, on the real server in demo mode
// with real git and Terraform: sign in; plan from the pull request's page
// and watch the running plan's log arrive on its job page without a
// reload; approve the plan on its page; apply it from the pull request's
// page, whose conversation then names the approver; unlock another lock
// from the locks page; freeze applies (banner everywhere, an apply
// refused, plans still run) and lift the freeze; search the logs and
// follow a hit to its line. Every step is asserted in the page, with a
// screenshot; the pull request's page and the overview fit 400 px; no page
// logs an error (CSP violations, exceptions, failed loads).
func TestBrowserControlPlaneTour(t *testing.T) {
	testEnv(t)
	shots := tourShots(t)
	b := newBrowser(t)
	dataDir := t.TempDir()
	m := startDemo(t, dataDir)
	gate := newTourGate(t)

	// Set-up no page offers: the seeded autoplan has planned and locked
	// staging; then a commit on the pull request's branch makes production
	// read the gate.
	if autoplan := demoWaitJob(t, m, atoll.JobPlan, "staging"); autoplan.State != atoll.JobSucceeded {
		t.Fatalf("autoplan = %+v", autoplan)
	}
	demoWaitIdle(t, m)
	tourPushGate(t, filepath.Join(dataDir, "demo", "infra"), gate.URL)

	// 1. Signed out, the overview leads to the login form.
	b.do("open the overview signed out", chromedp.Navigate(m.URL+"/"))
	b.waitFor("the login form", `location.pathname === '/login' && document.querySelector('form[action="/login"] input[name=password]')`)
	tourShot(b, shots, "01-login")
	b.do("sign in",
		chromedp.SendKeys(chromedp.CSS(`input[name=name]`), "admin", chromedp.NodeVisible),
		chromedp.SendKeys(chromedp.CSS(`input[name=password]`), testAdminPassword, chromedp.NodeVisible),
		chromedp.Click(chromedp.CSS(`form[action="/login"] button[type=submit]`), chromedp.NodeVisible))
	b.waitFor("the overview, signed in as admin", `location.pathname === '/' &&
		document.querySelector('form.signout') && document.querySelector('form.signout').innerText.includes('admin') &&
		document.body.innerText.includes('demo/infra')`)
	tourShot(b, shots, "02-overview")

	// 2. Plan from the pull request's page: production (changed by the push)
	// and staging. Production's plan waits at the gate, still running.
	pullPath := "/repos/demo/infra/pulls/1"
	b.clickUntil("open the pull request", chromedp.CSS(`a[href="`+pullPath+`"]`),
		`location.pathname === `+jsString(pullPath)+` && document.querySelector('#projects')`)
	b.clickUntil("press Plan all", chromedp.CSS(`#projects > .actions form:first-of-type button`),
		`document.querySelector('#outcome-all .notice')`)
	prodJobPath := tourString(b, "production's plan job in the outcome", `(() => {
		const li = [...document.querySelectorAll('#outcome-all .notice li')].find(li => li.innerText.includes('plan production'));
		return li && li.querySelector('a').getAttribute('href'); })()`)
	tourShot(b, shots, "03-pull-planning")
	b.clickUntil("open production's plan job", chromedp.CSS(`#outcome-all a[href="`+prodJobPath+`"]`),
		`location.pathname === `+jsString(prodJobPath)+` && document.querySelector('#log')`)
	// The mark lives as long as this document: a reload would erase it.
	b.waitFor("the job page of the unfinished plan, marked", `document.querySelector('#job-header .badge-queued, #job-header .badge-running') &&
		!document.querySelector('#log').innerText.includes('Plan: ') &&
		(window.__tour = 1) && (window.__tourLines = document.querySelectorAll('#log [data-seq]').length) >= 0`)
	select {
	case <-gate.hit:
	case <-time.After(2 * browserTimeout):
		t.Fatalf("production's plan never read the gate; page:\n%s", b.pageText())
	}
	b.waitFor("the lines before the gate, live", `window.__tour === 1 &&
		document.querySelector('#log').innerText.includes('data.terraform_remote_state.tourgate: Reading...') &&
		document.querySelector('#job-header .badge-running') && !document.querySelector('#log').innerText.includes('Plan: ')`)
	tourShot(b, shots, "04-job-live-waiting")
	gate.release()
	b.waitFor("the rest of the plan's log, live and without a reload", `window.__tour === 1 &&
		document.querySelector('#log').innerText.includes('tourgate: Read complete') &&
		document.querySelector('#log').innerText.includes('Plan: 3 to add') &&
		document.querySelectorAll('#log [data-seq]').length > window.__tourLines &&
		document.querySelector('#job-header .badge-succeeded')`)
	// A plan that only creates: its + lines are marked, and nothing as
	// destroyed (not terraform init's "- ..." bullets either).
	b.waitFor("the changes marked", `[...document.querySelectorAll('#log .d-add')].some(l => l.innerText.includes('resource "terraform_data" "network"')) &&
		!document.querySelector('#log .d-destroy')`)
	b.waitFor("every line once, in order", `(() => {
		const seqs = [...document.querySelectorAll('#log [data-seq]')].map(e => +e.dataset.seq);
		return seqs.length > 0 && seqs.every((s, i) => i === 0 || s === seqs[i-1] + 1);
	})()`)
	tourShot(b, shots, "05-job-live-done")

	// 3. The plan's page: its resource changes, then approve it.
	b.clickUntil("back to the pull request", chromedp.CSS(`.crumbs a[href="`+pullPath+`"]`),
		`location.pathname === `+jsString(pullPath)+` && document.querySelector('#projects')`)
	planPath := tourString(b, "production's plan link", `(() => { const row = `+tourRow("production")+`;
		return row && row.querySelector('a[href="`+prodJobPath+`"]') && row.querySelector('a[href^="/plans/"]').getAttribute('href'); })()`)
	b.clickUntil("open production's plan", chromedp.CSS(`#projects a[href="`+planPath+`"]`),
		`location.pathname === `+jsString(planPath)+` && document.querySelector('section.approval')`)
	b.waitFor("the resource changes", `(() => {
		const rs = [...document.querySelectorAll('details.resource')];
		const created = a => rs.some(r => r.querySelector('.addr').textContent.trim() === a && r.querySelector('.sym').textContent.trim() === '+');
		return created('terraform_data.network') && created('terraform_data.app[0]') && created('terraform_data.app[1]') &&
			document.body.innerText.includes('production-app-1');
	})()`)
	b.waitFor("an approval required", `document.querySelector('section.approval').innerText.includes('must be approved in Atoll') &&
		!document.querySelector('.banner-freeze')`)
	tourShot(b, shots, "06-plan")
	const reason = "tour: reviewed in the browser"
	approve := `section.approval form[action$="/approve"]`
	b.doUntil("give a reason", `document.querySelector(`+jsString(approve+` input[name=reason]`)+`).value === `+jsString(reason),
		chromedp.Evaluate[chromedp.Void](`document.querySelector(`+jsString(approve+` input[name=reason]`)+`).value = ''`),
		chromedp.SendKeys(chromedp.CSS(approve+` input[name=reason]`), reason, chromedp.NodeVisible))
	b.clickUntil("press Approve", chromedp.CSS(approve+` button[type=submit]`),
		`document.querySelector('section.approval').innerText.includes('Approved by admin')`)
	b.waitFor("the approval in place, with its message", `window.location.pathname === `+jsString(planPath)+` && (() => {
		const p = document.querySelector('section.approval');
		return p.querySelector('.badge').textContent.includes('approved') && p.innerText.includes(`+jsString(reason)+`) &&
			p.querySelector('.flash.ok') && p.querySelector('.flash.ok').innerText.includes('Plan approved until');
	})()`)
	tourShot(b, shots, "07-plan-approved")

	// 4. Apply it from the pull request's page.
	b.clickUntil("back to the pull request", chromedp.CSS(`.crumbs a[href="`+pullPath+`"]`),
		`location.pathname === `+jsString(pullPath)+` && document.querySelector('#projects')`)
	prodRow := "#" + tourString(b, "production's row", tourRow("production")+`.id`)
	stagingRow := "#" + tourString(b, "staging's row", tourRow("staging")+`.id`)
	b.waitFor("production applicable", `document.querySelector('`+prodRow+` .badge-plan-applicable')`)
	b.clickUntil("press Apply for production", chromedp.CSS(prodRow+` form:has(input[name=command][value=apply]) button`),
		`document.querySelector('`+prodRow+` .outcome .notice')`)
	b.waitFor("production's apply succeeded", `[...document.querySelectorAll('`+prodRow+` .outcome .notice li')].some(li =>
		li.innerText.includes('apply production') && li.querySelector('.badge-succeeded')) &&
		document.querySelector('`+prodRow+` .outcome .notice-final')`)
	tourShot(b, shots, "08-pull-applied")
	tourReloadUntil(b, "the apply comment naming the approver", atollComment("Apply complete!", "production", "Approved by admin", reason))
	tourShot(b, shots, "09-pull-apply-comment")

	// 5. Another lock: plan staging from its row (its lock is the
	// autoplan's), then unlock it on the locks page.
	b.clickUntil("press Plan for staging", chromedp.CSS(stagingRow+` form:has(input[name=command][value=plan]) button`),
		`document.querySelector('`+stagingRow+` .outcome .notice')`)
	b.waitFor("staging's plan succeeded", `[...document.querySelectorAll('`+stagingRow+` .outcome .notice li')].some(li =>
		li.innerText.includes('plan staging') && li.querySelector('.badge-succeeded')) &&
		document.querySelector('`+stagingRow+` .outcome .notice-final')`)
	b.clickUntil("open the locks page", chromedp.CSS(`header nav a[href="/locks"]`), `location.pathname === '/locks' && document.querySelector('table')`)
	lockRows := `[...document.querySelectorAll('tbody tr')].map(r => r.querySelector('td[data-th=Project]').innerText)`
	b.waitFor("both locks listed", lockRows+`.some(p => p.includes('staging')) && `+lockRows+`.some(p => p.includes('production'))`)
	stagingBox := `input[type=checkbox][name=id][data-label*="staging"]`
	b.clickUntil("select staging's lock", chromedp.CSS(stagingBox), `document.querySelector('`+stagingBox+`').checked`)
	tourShot(b, shots, "10-locks-selected")
	b.clickUntil("press Unlock selected", chromedp.CSS(`p.row-actions button[type=submit]`),
		`location.pathname === '/locks' && document.querySelector('.flash.ok')`)
	b.waitFor("the success message, staging's lock gone, production's kept", `document.querySelector('.flash.ok').innerText.includes('staging') &&
		!`+lockRows+`.some(p => p.includes('staging')) && `+lockRows+`.some(p => p.includes('production'))`)
	tourShot(b, shots, "11-locks-unlocked")

	// 6. Freeze applies from the audit page: the banner is on every page,
	// plans still run, an apply is refused; then lift the freeze.
	b.clickUntil("open the audit page", chromedp.CSS(`header nav a[href="/audit"]`), `location.pathname === '/audit' && document.querySelector('#freeze')`)
	const freezeReason = "tour release week"
	b.doUntil("give the freeze a reason", `document.querySelector('#freeze input[name=reason]').value === `+jsString(freezeReason),
		chromedp.Evaluate[chromedp.Void](`document.querySelector('#freeze input[name=reason]').value = ''`),
		chromedp.SendKeys(chromedp.CSS(`#freeze input[name=reason]`), freezeReason, chromedp.NodeVisible))
	b.clickUntil("press Freeze applies", chromedp.CSS(`#freeze button.danger`), `document.querySelector('.banner-freeze')`)
	banner := `document.querySelector('.banner-freeze') && document.querySelector('.banner-freeze').innerText.includes('Applies are frozen by admin: ` + freezeReason + `')`
	b.waitFor("the freeze panel says frozen", banner+` && document.querySelector('#freeze').innerText.includes('Lift the freeze')`)
	tourShot(b, shots, "12-frozen")
	for _, path := range []string{"/", "/runs", "/locks", "/admin", prodJobPath, planPath, pullPath} {
		b.do("open "+path, chromedp.Navigate(m.URL+path))
		b.waitFor("the freeze banner on "+path, `location.pathname === `+jsString(path)+` && `+banner)
	}
	tourShot(b, shots, "13-pull-frozen")
	b.clickUntil("press Plan for staging while frozen", chromedp.CSS(stagingRow+` form:has(input[name=command][value=plan]) button`),
		`document.querySelector('`+stagingRow+` .outcome .notice')`)
	b.waitFor("staging planned while frozen", `[...document.querySelectorAll('`+stagingRow+` .outcome .notice li')].some(li =>
		li.innerText.includes('plan staging') && li.querySelector('.badge-succeeded')) &&
		document.querySelector('`+stagingRow+` .outcome .notice-final')`)
	b.do("reload the pull request", chromedp.Navigate(m.URL+pullPath))
	b.waitFor("staging applicable", `document.querySelector('`+stagingRow+` .badge-plan-applicable')`)
	b.clickUntil("press Apply for staging while frozen", chromedp.CSS(stagingRow+` form:has(input[name=command][value=apply]) button`),
		`document.querySelector('`+stagingRow+` .outcome .notice')`)
	b.waitFor("the apply answered without a job", `document.querySelector('`+stagingRow+` .outcome .notice-final') &&
		document.querySelector('`+stagingRow+` .outcome .notice').innerText.includes('nothing ran')`)
	tourReloadUntil(b, "the refusal in the conversation", atollComment("Apply refused", "Applies are frozen by admin", freezeReason))
	b.waitFor("no apply of staging", `!document.querySelector('`+stagingRow+` .mini-jobs').innerText.includes('apply')`)
	tourShot(b, shots, "14-pull-apply-refused")
	b.clickUntil("open the audit page", chromedp.CSS(`header nav a[href="/audit"]`), `location.pathname === '/audit' && document.querySelector('#freeze')`)
	b.clickUntil("press Lift the freeze", chromedp.CSS(`#freeze button.primary`), `!document.querySelector('.banner-freeze')`)
	b.waitFor("applies allowed", `document.querySelector('#freeze').innerText.includes('Applies are allowed') &&
		document.querySelector('table.audit').innerText.includes('freeze.on')`)
	tourShot(b, shots, "15-unfrozen")

	// 7. Search the logs for the gate, and follow the hit to its line.
	b.clickUntil("open the runs page", chromedp.CSS(`header nav a[href="/runs"]`), `location.pathname === '/runs' && document.querySelector('input[name=q]')`)
	b.doUntil("search the logs", `new URLSearchParams(location.search).get('q') === 'tourgate'`,
		chromedp.Evaluate[chromedp.Void](`document.querySelector('input[name=q]').value = ''`),
		chromedp.SendKeys(chromedp.CSS(`input[name=q]`), "tourgate", chromedp.NodeVisible),
		chromedp.Click(chromedp.CSS(`form.filters button.primary`), chromedp.NodeVisible))
	hit := `[...document.querySelectorAll('.hit')].find(h => h.querySelector('.hit-head a[href="` + prodJobPath + `"]'))`
	tourReloadUntil(b, "production's plan among the hits", `new URLSearchParams(location.search).get('q') === 'tourgate' && `+hit+` &&
		[...`+hit+`.querySelectorAll('.hit-lines mark')].some(m => m.textContent.toLowerCase() === 'tourgate')`)
	tourShot(b, shots, "16-runs-search")
	linePath := tourString(b, "the hit's line link", `[...`+hit+`.querySelectorAll('.hit-lines a')].find(a => a.innerText.includes('Reading...')).getAttribute('href')`)
	if !strings.HasPrefix(linePath, prodJobPath+"#L") {
		t.Fatalf("hit links to %q, want a line of %s", linePath, prodJobPath)
	}
	lineID := strings.TrimPrefix(linePath, prodJobPath+"#")
	b.clickUntil("follow the hit", chromedp.CSS(`a[href="`+linePath+`"]`), `location.pathname === `+jsString(prodJobPath)+` &&
		location.hash === '#`+lineID+`' && document.getElementById('`+lineID+`') &&
		document.getElementById('`+lineID+`').classList.contains('target') &&
		document.getElementById('`+lineID+`').innerText.includes('tourgate: Reading...')`)
	tourShot(b, shots, "17-job-line")

	// 8. The overview and the pull request's page at 400 px.
	b.do("open the overview", chromedp.Navigate(m.URL+"/"))
	b.waitFor("the overview", `document.body.innerText.includes('demo/infra')`)
	tourNarrow(b, shots, "18-overview-400px")
	b.do("open the pull request", chromedp.Navigate(m.URL+pullPath))
	b.waitFor("the pull request", `document.querySelector('#projects')`)
	tourNarrow(b, shots, "19-pull-400px")

	// 9. No page logged an error; the confirm was the unlock's.
	b.mu.Lock()
	dialogs := b.dialogs
	b.mu.Unlock()
	problems := b.console.Problems()
	if len(dialogs) == 0 || !strings.Contains(dialogs[0], "staging") {
		t.Errorf("dialogs = %q, want first the unlock's confirm naming staging", dialogs)
	}
	if len(problems) > 0 {
		t.Errorf("the pages logged errors:\n%s", strings.Join(problems, "\n"))
	}
}
