package web_test

import (
	"context"
	"fmt"
	"os"
	"os/exec"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/chromedp/chromedp"
)

// chromiumBin is the Chromium the browser tests drive, or skips the test.
func chromiumBin(t *testing.T) string {
	t.Helper()
	if bin := os.Getenv("ATOLL_TEST_CHROMIUM"); bin != "" {
		return bin
	}
	bin, err := exec.LookPath("chromium")
	if err != nil {
		t.Skip("chromium not installed (make chromium installs it)")
	}
	return bin
}

// browser is a headless Chromium, 400 px wide, that records the page's
// console errors.
type browser struct {
	t        *testing.T
	ctx      context.Context
	mu       sync.Mutex
	problems []string
}

func openBrowser(t *testing.T, bin string) *browser {
	t.Helper()
	alloc, cancelAlloc := chromedp.NewExecAllocator(context.Background(), chromedp.ExecPath(bin), chromedp.Headless,
		chromedp.NoSandbox, chromedp.DisableGPU, chromedp.NoFirstRun, chromedp.UserDataDir(t.TempDir()), chromedp.WindowSize(400, 900))
	ctx, cancelCtx := chromedp.NewContext(alloc)
	t.Cleanup(func() { cancelCtx(); cancelAlloc() })
	b := &browser{t: t, ctx: ctx}
	console := chromedp.Console(ctx)
	go func() {
		for msg, err := range console {
			if err != nil {
				return
			}
			if (msg.Type == chromedp.ConsoleException || msg.Type == chromedp.ConsoleError) && !strings.HasSuffix(msg.URL, "/favicon.ico") {
				b.mu.Lock()
				b.problems = append(b.problems, fmt.Sprintf("%s: %s (%s)", msg.Type, msg.Text, msg.URL))
				b.mu.Unlock()
			}
		}
	}()
	return b
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
	b.mu.Lock()
	defer b.mu.Unlock()
	if len(b.problems) > 0 {
		b.t.Errorf("console errors (CSP?): %v", b.problems)
	}
}
