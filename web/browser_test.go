package web_test

import (
	"context"
	"testing"
	"time"

	"github.com/chromedp/chromedp"

	"github.com/atollhq/atoll/browsertest"
)

// browser is a headless Chromium, 400 px wide, that records the page's
// console errors.
type browser struct {
	t       *testing.T
	ctx     context.Context
	console *browsertest.Console
}

func openBrowser(t *testing.T) *browser {
	t.Helper()
	ctx := browsertest.Start(t, 400, 900)
	return &browser{t: t, ctx: ctx, console: browsertest.RecordConsole(ctx)}
}

// run runs steps or fails the test with what they were for.
func (b *browser) run(what string, steps ...chromedp.Action[chromedp.Void]) {
	b.t.Helper()
	c, cancel := context.WithTimeout(b.ctx, 60*time.Second)
	defer cancel()
	if err := chromedp.Do(c, steps...); err != nil {
		b.t.Fatalf("%s: %v", what, err)
	}
}

// waitFor waits up to 30 s for the expression js to be true.
func (b *browser) waitFor(what, js string) {
	b.t.Helper()
	deadline := time.Now().Add(30 * time.Second)
	for time.Now().Before(deadline) {
		c, cancel := context.WithTimeout(b.ctx, 10*time.Second)
		ok, err := chromedp.Run(c, chromedp.Evaluate[bool](`(() => { try { return !!(`+js+`); } catch (e) { return false; } })()`))
		cancel()
		if err == nil && ok {
			return
		}
		time.Sleep(100 * time.Millisecond)
	}
	b.t.Fatalf("timed out waiting for %s", what)
}

// checkConsole fails the test if the page logged errors (a CSP refusal,
// say).
func (b *browser) checkConsole() {
	b.t.Helper()
	if p := b.console.Problems(); len(p) > 0 {
		b.t.Errorf("console errors (CSP?): %v", p)
	}
}
