package web_test

import (
	"context"
	"maps"
	"net/http"
	"net/http/httptest"
	"sync/atomic"
	"testing"
	"time"

	"github.com/chromedp/chromedp"

	"github.com/atollhq/atoll"
	"github.com/atollhq/atoll/store"
)

// The Plan button works in a real browser under the pages' CSP: htmx posts
// it, the outcome appears in the project's row, and the notice follows the
// request over the change stream until it is done, without a reload or
// polling. The comment box posts in place and the comment appears in the
// live conversation.
func TestPullPageBrowser(t *testing.T) {
	f := newPullFixture(t)
	// Nothing runs: what changes below is what the test changes.
	err := f.db.Update(context.Background(), func(tx *store.Tx) error {
		return tx.FinishJob(f.jobs["planning"], atoll.JobCanceled, "", nil)
	})
	if err != nil {
		t.Fatal(err)
	}
	// While noticeGate is set, a notice's answer is computed, announced on
	// noticeComputed, and held until the gate closes: the test commits a
	// change while the browser's fetch is in flight.
	var noticeGate atomic.Pointer[chan struct{}]
	noticeComputed := make(chan struct{}, 1)
	// Stands in for the sign-in middleware: every request is alice's.
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		r = r.WithContext(atoll.NewContextWithUser(r.Context(), alice))
		gate := noticeGate.Load()
		if gate == nil || r.URL.Query().Get("section") != "notice" {
			f.h.ServeHTTP(w, r)
			return
		}
		rec := httptest.NewRecorder()
		f.h.ServeHTTP(rec, r)
		select {
		case noticeComputed <- struct{}{}:
		default:
		}
		<-*gate
		maps.Copy(w.Header(), rec.Header())
		w.WriteHeader(rec.Code)
		w.Write(rec.Body.Bytes())
	}))
	t.Cleanup(srv.Close)

	b := openBrowser(t)
	run, waitFor, ctx := b.run, b.waitFor, b.ctx

	ready := itoa(f.projects["ready"])
	run("open the pull request", chromedp.Navigate(srv.URL+"/repos/acme/infra/pulls/7"))
	waitFor("htmx", `window.htmx`)
	// A marker that a full reload would lose.
	run("mark the page", chromedp.Evaluate[chromedp.Void](`window.notReloaded = true`))
	run("click Plan", chromedp.Click(`#project-`+ready+` form input[value="plan"] ~ button`, chromedp.NodeVisible))
	waitFor("the notice in the row", `document.querySelector("#outcome-`+ready+`").innerText.includes("Plan queued as request #1")`)
	q := f.queued(t)
	if len(q) != 1 || q[0].Comment != "atlantis plan -p ready" || q[0].User != "alice" {
		t.Fatalf("queued %+v", q)
	}
	// The worker takes the request and finds nothing to run: the row
	// follows it to the end by itself. The request finishes while the
	// notice's fetch for the claim is in flight: the change that arrives
	// then is aimed at the notice that fetch replaces, and must not be
	// lost with it (the CI tour once waited for it in vain).
	ctxDB := context.Background()
	gate := make(chan struct{})
	noticeGate.Store(&gate)
	if _, err := f.db.ClaimRequest(ctxDB, "node-a"); err != nil {
		t.Fatal(err)
	}
	select {
	case <-noticeComputed:
	case <-time.After(30 * time.Second):
		t.Fatal("the claim did not re-fetch the notice")
	}
	if err := finishRequest(ctxDB, f, q[0].ID); err != nil {
		t.Fatal(err)
	}
	time.Sleep(100 * time.Millisecond) // the change reaches the browser
	noticeGate.Store(nil)
	close(gate)
	waitFor("the finished request", `document.querySelector("#outcome-`+ready+` .notice-final") &&
		document.querySelector("#outcome-`+ready+`").innerText.includes("nothing ran")`)
	waitFor("no full reload", `window.notReloaded === true && location.search.includes("request=1")`)
	b.checkConsole()
	// A refusal is shown in place too (htmx swaps 4xx answers; the browser
	// logs the 400 itself).
	spaced := itoa(f.projects["spaced"])
	// The projects section may be swapped by the live stream (the request
	// above just finished) while the click lands: a click on the replaced
	// button is lost, so click again until the refusal shows (a refusal
	// queues nothing, however often it is asked for).
	refused := `document.querySelector("#outcome-` + spaced + ` .flash")?.innerText.includes("cannot be named in a comment")`
	for attempt := 1; ; attempt++ {
		c, cancel := context.WithTimeout(ctx, 30*time.Second)
		err := chromedp.Do(c, chromedp.Click(`#project-`+spaced+` form input[value="plan"] ~ button`, chromedp.NodeVisible))
		cancel()
		if attempt == 5 {
			waitFor("the refusal in the row", refused)
			break
		}
		if err != nil {
			continue // the button was replaced under the click
		}
		if ok, err := chromedp.Run(ctx, chromedp.Poll[bool](refused, chromedp.WithPollingTimeout(10*time.Second))); err == nil && ok {
			break
		}
	}
	if n := len(f.queued(t)); n != 1 {
		t.Errorf("%d requests queued, want 1", n)
	}
	// The comment box: posted as alice, the outcome in the form, the box
	// emptied, the comment in the conversation through its live section.
	run("write a comment", chromedp.SendKeys(`#comment textarea`, "atlantis plan -d stale"),
		chromedp.Click(`#comment button[type=submit]`, chromedp.NodeVisible))
	waitFor("the outcome in the form", `document.querySelector("#comment-outcome").innerText.includes("Comment posted") &&
		document.querySelector("#comment textarea").value === ""`)
	waitFor("the comment in the conversation", `document.querySelector("#section-conversation").innerText.includes("atlantis plan -d stale")`)
	waitFor("still no full reload", `window.notReloaded === true`)
	if q := f.queued(t); len(q) != 2 || q[1].Comment != "atlantis plan -d stale" || q[1].User != "alice" {
		t.Errorf("queued after the comment: %+v", q)
	}
}

func finishRequest(ctx context.Context, f *pullFixture, id int64) error {
	return f.db.Update(ctx, func(tx *store.Tx) error { return tx.FinishRequest(id, atoll.RequestDone, "") })
}

// A live section is not swapped under a press: a change that arrives while
// a button in the projects section is held down leaves the button in
// place, so the click that the release makes lands; the section follows
// the change once the press is over.
func TestLiveSectionWaitsForAPress(t *testing.T) {
	f := newPullFixture(t)
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		f.h.ServeHTTP(w, r.WithContext(atoll.NewContextWithUser(r.Context(), alice)))
	}))
	t.Cleanup(srv.Close)
	b := openBrowser(t)
	b.run("open the pull request", chromedp.Navigate(srv.URL+"/repos/acme/infra/pulls/7"))
	b.waitFor("htmx and the change stream", `window.htmx && window.atollLive.streaming`)
	ready, planning := itoa(f.projects["ready"]), itoa(f.projects["planning"])
	button := `#project-` + ready + ` form input[value="plan"] ~ button`
	b.waitFor("planning running", `document.querySelector("#project-`+planning+`").innerText.includes("running")`)
	b.run("mark the Plan button", chromedp.Evaluate[chromedp.Void](`document.querySelector('`+button+`').pressMe = true`))
	box, err := chromedp.Run(b.ctx, chromedp.Evaluate[[]float64](`(() => { const el = document.querySelector('`+button+`'); el.scrollIntoView({block: "center"}); const r = el.getBoundingClientRect(); return [r.x + r.width/2, r.y + r.height/2]; })()`))
	if err != nil || len(box) != 2 {
		t.Fatalf("the Plan button's position: %v %v", box, err)
	}
	b.run("press the Plan button", chromedp.MouseEvent(chromedp.MousePressed, box[0], box[1], chromedp.ButtonLeft, chromedp.ClickCount(1)))

	// The running plan ends while the button is held: the jobs section
	// follows it, the projects section waits, and the button stays.
	if err := f.db.Update(context.Background(), func(tx *store.Tx) error {
		return tx.FinishJob(f.jobs["planning"], atoll.JobCanceled, "", nil)
	}); err != nil {
		t.Fatal(err)
	}
	b.waitFor("the jobs section following the change", `document.querySelector("#section-jobs").innerText.includes("canceled")`)
	time.Sleep(300 * time.Millisecond) // the projects section's answer would have been swapped in by now
	b.waitFor("the pressed button still in place", `document.querySelector('`+button+`').pressMe === true &&
		document.querySelector("#project-`+planning+`").innerText.includes("running")`)

	b.run("release it", chromedp.MouseEvent(chromedp.MouseReleased, box[0], box[1], chromedp.ButtonLeft, chromedp.ClickCount(1)))
	b.waitFor("the click's notice", `document.querySelector("#outcome-`+ready+`").innerText.includes("Plan queued as request #1")`)
	if q := f.queued(t); len(q) != 1 || q[0].Comment != "atlantis plan -p ready" {
		t.Fatalf("queued %+v; want the plan the click asked for", q)
	}
	b.waitFor("the section following the change after the press", `!document.querySelector("#project-`+planning+`").innerText.includes("running")`)
	b.checkConsole()
}

// A change committed after the page was read but before its change stream
// began is not lost: the stream's first event says the page is behind,
// and its sections are read again.
func TestLivePageCatchesUpWithAChangeBeforeItsStream(t *testing.T) {
	f := newPullFixture(t)
	streamAsked := make(chan struct{}, 1)
	streamGate := make(chan struct{})
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if r.URL.Path == "/api/v1/changes" {
			select {
			case streamAsked <- struct{}{}:
			default:
			}
			<-streamGate
		}
		f.h.ServeHTTP(w, r.WithContext(atoll.NewContextWithUser(r.Context(), alice)))
	}))
	t.Cleanup(srv.Close)
	t.Cleanup(func() {
		select {
		case <-streamGate:
		default:
			close(streamGate)
		}
	})
	b := openBrowser(t)
	b.run("open the pull request", chromedp.Navigate(srv.URL+"/repos/acme/infra/pulls/7"))
	planning := itoa(f.projects["planning"])
	b.waitFor("planning running", `document.querySelector("#project-`+planning+`").innerText.includes("running")`)
	select {
	case <-streamAsked:
	case <-time.After(30 * time.Second):
		t.Fatal("the page did not open its change stream")
	}
	// The page is read, its stream not begun: the plan ends now.
	if err := f.db.Update(context.Background(), func(tx *store.Tx) error {
		return tx.FinishJob(f.jobs["planning"], atoll.JobCanceled, "", nil)
	}); err != nil {
		t.Fatal(err)
	}
	close(streamGate)
	b.waitFor("the projects and jobs sections caught up", `!document.querySelector("#project-`+planning+`").innerText.includes("running") &&
		document.querySelector("#section-jobs").innerText.includes("canceled")`)
	b.checkConsole()
}

// A notice an action puts in a row follows its request even when the
// request changed (here: claimed and finished) before the notice reached
// the page: the changes' own re-fetches found no notice to re-read, so the
// notice, read at an older mark, is read again as it arrives.
func TestNoticeCatchesUpWithChangesBeforeItArrives(t *testing.T) {
	f := newPullFixture(t)
	var held atomic.Bool
	answered := make(chan struct{}, 1)
	release := make(chan struct{})
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		r = r.WithContext(atoll.NewContextWithUser(r.Context(), alice))
		if r.Method != http.MethodPost || !held.Load() {
			f.h.ServeHTTP(w, r)
			return
		}
		rec := httptest.NewRecorder()
		f.h.ServeHTTP(rec, r)
		answered <- struct{}{}
		<-release
		maps.Copy(w.Header(), rec.Header())
		w.WriteHeader(rec.Code)
		w.Write(rec.Body.Bytes())
	}))
	t.Cleanup(srv.Close)
	b := openBrowser(t)
	b.run("open the pull request", chromedp.Navigate(srv.URL+"/repos/acme/infra/pulls/7"))
	b.waitFor("htmx and the change stream", `window.htmx && window.atollLive.streaming`)
	ready := itoa(f.projects["ready"])
	held.Store(true)
	b.run("click Plan", chromedp.Click(`#project-`+ready+` form input[value="plan"] ~ button`, chromedp.NodeVisible))
	select {
	case <-answered:
	case <-time.After(30 * time.Second):
		t.Fatal("the Plan button posted nothing")
	}
	// The answer says "queued"; before it reaches the page the request is
	// taken and ends, and the page hears of both.
	q := f.queued(t)
	if len(q) != 1 {
		t.Fatalf("queued %+v", q)
	}
	ctx := context.Background()
	if _, err := f.db.ClaimRequest(ctx, "node-a"); err != nil {
		t.Fatal(err)
	}
	if err := finishRequest(ctx, f, q[0].ID); err != nil {
		t.Fatal(err)
	}
	time.Sleep(time.Second) // the changes reach the page, and its sections follow
	close(release)
	b.waitFor("the finished request in the row", `document.querySelector("#outcome-`+ready+` .notice-final") &&
		document.querySelector("#outcome-`+ready+`").innerText.includes("nothing ran")`)
	b.checkConsole()
}

// A live section can put a form on the page a moment before htmx
// processes it (htmx does that in its settle step). A submission then
// would go as a plain form and reload the page: the pull page test once
// found its page reloaded after the comment box was swapped under a slow
// machine. atoll.js hands such a submission to htmx. Here the comment box
// is replaced by a copy htmx has never seen and submitted at once.
func TestLiveFormSubmittedBeforeHtmxProcessesIt(t *testing.T) {
	f := newPullFixture(t)
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		f.h.ServeHTTP(w, r.WithContext(atoll.NewContextWithUser(r.Context(), alice)))
	}))
	t.Cleanup(srv.Close)
	b := openBrowser(t)
	b.run("open the pull request", chromedp.Navigate(srv.URL+"/repos/acme/infra/pulls/7"))
	b.waitFor("htmx", `window.htmx`)
	b.run("mark the page and submit an unprocessed copy of the comment box", chromedp.Evaluate[chromedp.Void](`(() => {
		window.notReloaded = true;
		const old = document.querySelector("#comment");
		const holder = document.createElement("div");
		holder.innerHTML = old.outerHTML;
		const copy = holder.firstElementChild;
		old.replaceWith(copy);
		copy.querySelector("textarea").value = "atlantis plan -d stale";
		copy.requestSubmit();
	})()`))
	b.waitFor("the outcome in the form", `document.querySelector("#comment-outcome").innerText.includes("Comment posted")`)
	b.waitFor("no full reload", `window.notReloaded === true`)
	if q := f.queued(t); len(q) != 1 || q[0].Comment != "atlantis plan -d stale" {
		t.Errorf("queued %+v", q)
	}
}
