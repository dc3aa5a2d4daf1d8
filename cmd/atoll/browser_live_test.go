package main_test

import (
	"fmt"
	"testing"
	"time"

	"github.com/chromedp/chromedp"

	"github.com/atollhq/atoll"
)

const slowChattyApply = `resource "terraform_data" "chatty" {
  input = "x"
  provisioner "local-exec" {
    command = "for i in 1 2 3 4 5 6 7 8 9 10; do echo tick-$i; sleep 0.4; done"
  }
}
`

// The overview and the job page follow the work without reloading: the
// autoplan appears on an overview opened before it, and a running apply's
// page receives its log line by line over the websocket (every seq once,
// in order) and shows the job succeeded when it ends.
func TestBrowserLivePages(t *testing.T) {
	e := newE2E(t)
	b := newBrowser(t)

	b.signIn(e.m.URL) // the overview, once signed in
	b.waitFor("the overview's sections", `document.querySelector('#section-jobs') && document.querySelector('#section-runs')`)
	b.waitFor("a mark that a reload would erase", `(window.__atollMark = true)`)
	e.open(1, "chatty", map[string]string{"staging/main.tf": slowChattyApply}, "staging/main.tf")
	b.waitFor("the autoplan on the overview, without a reload", `window.__atollMark === true &&
		[...document.querySelectorAll('#section-jobs a, #section-runs a')].some(a => /^\/jobs\/\d+$/.test(a.getAttribute('href')))`)
	e.waitComment(1, 1)

	e.comment(1, "atlantis apply")
	var apply []atoll.Job
	eventually(t, 60*time.Second, "apply running", func() bool {
		getJSON(t, e.m.URL+"/api/v1/jobs?kind=apply", &apply)
		return len(apply) == 1 && apply[0].State == atoll.JobRunning
	})
	b.do("open the running apply", chromedp.Navigate(fmt.Sprintf("%s/jobs/%d", e.m.URL, apply[0].ID)))
	b.waitFor("the job page of a running job", `document.querySelector('#log') &&
		(window.__atollMark = true) && (window.__firstLines = document.querySelectorAll('#log .ln').length) >= 0 &&
		document.querySelector('#job-header .badge-running')`)
	b.waitFor("the whole log, live and without a reload", `window.__atollMark === true &&
		document.querySelector('#log').innerText.includes('tick-10') && document.querySelector('#log').innerText.includes('Apply complete!')`)
	b.waitFor("every line once, in order", `(() => {
		const seqs = [...document.querySelectorAll('#log .ln')].map(e => +e.dataset.seq);
		return seqs.length > 0 && seqs.every((s, i) => i === 0 || s === seqs[i-1] + 1);
	})()`)
	b.waitFor("lines that arrived after the page", `document.querySelectorAll('#log .ln').length > window.__firstLines`)
	b.waitFor("the header updated in place", `window.__atollMark === true && document.querySelector('#job-header .badge-succeeded')`)
	b.waitFor("the follow toggle", `document.querySelector('#follow') && !document.querySelector('#follow-label').hidden`)
	// A link to one line (as a search hit links) shows it and stops following.
	b.do("open a line of the log", chromedp.Navigate(fmt.Sprintf("%s/jobs/%d#L2", e.m.URL, apply[0].ID)))
	b.waitFor("the line marked", `document.querySelector('#L2.target') && !document.querySelector('#follow').checked`)
	problems := b.console.Problems()
	if len(problems) > 0 {
		t.Errorf("the pages logged errors:\n%v", problems)
	}
}
