// Package browsertest starts the headless Chromium that the browser tests
// of package web and cmd/atoll drive, with the flags that keep it quiet and
// offline, and records the errors its pages log.
package browsertest

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

// StartTimeout bounds Chromium's start.
const StartTimeout = 60 * time.Second

// Bin is the Chromium the Makefile installs: $ATOLL_TEST_CHROMIUM, else
// chromium on PATH. The test is skipped only when there is none.
func Bin(t testing.TB) string {
	t.Helper()
	if bin := os.Getenv("ATOLL_TEST_CHROMIUM"); bin != "" {
		if _, err := os.Stat(bin); err != nil {
			t.Fatalf("ATOLL_TEST_CHROMIUM: %v", err)
		}
		return bin
	}
	bin, err := exec.LookPath("chromium")
	if err != nil {
		t.Skip("chromium not installed (make chromium installs it)")
	}
	return bin
}

// Start starts Chromium (Bin) with a fresh profile and a window of width ×
// height and returns the context of its first tab; the browser stops when
// the test ends.
func Start(t testing.TB, width, height int) context.Context {
	t.Helper()
	bin := Bin(t)
	allocCtx, cancelAlloc := chromedp.NewExecAllocator(context.Background(),
		chromedp.ExecPath(bin),
		chromedp.Headless,
		chromedp.NoSandbox,
		chromedp.DisableGPU,
		chromedp.NoFirstRun,
		chromedp.NoDefaultBrowserCheck,
		chromedp.Flag("disable-background-networking", true),
		chromedp.Flag("disable-quic", true),
		chromedp.Flag("disable-component-update", true),
		chromedp.Flag("disable-sync", true),
		chromedp.Flag("disable-dev-shm-usage", true),
		chromedp.Flag("disable-extensions", true),
		chromedp.Flag("disable-default-apps", true),
		chromedp.Flag("disable-features", "Translate,MediaRouter,OptimizationHints"),
		chromedp.Flag("metrics-recording-only", true),
		chromedp.Flag("password-store", "basic"),
		chromedp.UserDataDir(t.TempDir()),
		chromedp.WindowSize(width, height),
	)
	ctx, cancelCtx := chromedp.NewContext(allocCtx)
	// Cleanups run last-registered first: the browser stops before its
	// profile directory is removed.
	t.Cleanup(func() {
		cancelCtx()
		cancelAlloc()
	})
	startCtx, cancel := context.WithTimeout(context.Background(), StartTimeout)
	defer cancel()
	started := make(chan error, 1)
	go func() { started <- chromedp.Do(ctx) }() // the first action starts the browser, bound to ctx
	select {
	case err := <-started:
		if err != nil {
			t.Fatalf("start chromium %s: %v", bin, err)
		}
	case <-startCtx.Done():
		t.Fatalf("chromium %s did not start within %v", bin, StartTimeout)
	}
	return ctx
}

// Console records the exceptions and errors the pages of ctx's tab log
// (a CSP refusal, a failed load), except the favicon's 404: Atoll serves
// none.
type Console struct {
	mu       sync.Mutex
	problems []string
}

// RecordConsole starts recording ctx's console.
func RecordConsole(ctx context.Context) *Console {
	c := &Console{}
	console := chromedp.Console(ctx)
	go func() {
		for msg, err := range console {
			if err != nil {
				return
			}
			if strings.HasSuffix(msg.URL, "/favicon.ico") {
				continue
			}
			if msg.Type == chromedp.ConsoleException || msg.Type == chromedp.ConsoleError {
				c.mu.Lock()
				c.problems = append(c.problems, fmt.Sprintf("%s: %s (%s:%d)", msg.Type, msg.Text, msg.URL, msg.Line+1))
				c.mu.Unlock()
			}
		}
	}()
	return c
}

// Problems are the errors recorded so far.
func (c *Console) Problems() []string {
	c.mu.Lock()
	defer c.mu.Unlock()
	return append([]string(nil), c.problems...)
}
