package web_test

import (
	"bufio"
	"bytes"
	"errors"
	"fmt"
	"io"
	"net"
	"net/http"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/atollhq/atoll/web"
)

// rawConn opens a TCP connection to the server, for requests whose body
// pace and size the test controls.
func rawConn(t *testing.T, s *liveServer) net.Conn {
	t.Helper()
	conn, err := net.Dial("tcp", s.Addr())
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { conn.Close() })
	return conn
}

// webhookHead is the request line and headers of a GitHub webhook; length
// < 0 means a chunked body.
func webhookHead(sig string, length int64) string {
	var b strings.Builder
	b.WriteString("POST /events HTTP/1.1\r\nHost: atoll.test\r\nContent-Type: application/json\r\n")
	b.WriteString("X-GitHub-Event: pull_request\r\nX-GitHub-Delivery: d-1\r\n")
	if sig != "" {
		fmt.Fprintf(&b, "X-Hub-Signature-256: %s\r\n", sig)
	}
	if length >= 0 {
		fmt.Fprintf(&b, "Content-Length: %d\r\n", length)
	} else {
		b.WriteString("Transfer-Encoding: chunked\r\n")
	}
	b.WriteString("\r\n")
	return b.String()
}

// sendBody writes size bytes of body (chunked if asked) in 64 KiB pieces
// and reports how many the server took before the connection failed.
func sendBody(conn net.Conn, size int64, chunked bool) <-chan int64 {
	sent := make(chan int64, 1)
	go func() {
		conn.SetWriteDeadline(time.Now().Add(60 * time.Second))
		piece := bytes.Repeat([]byte{'x'}, 64<<10)
		var n int64
		for n < size {
			p := piece[:min(int64(len(piece)), size-n)]
			var err error
			if chunked {
				_, err = fmt.Fprintf(conn, "%x\r\n%s\r\n", len(p), p)
			} else {
				_, err = conn.Write(p)
			}
			if err != nil {
				break
			}
			n += int64(len(p))
		}
		if n == size && chunked {
			io.WriteString(conn, "0\r\n\r\n")
		}
		sent <- n
	}()
	return sent
}

func readResponse(t *testing.T, conn net.Conn) (*http.Response, string) {
	t.Helper()
	conn.SetReadDeadline(time.Now().Add(60 * time.Second))
	res, err := http.ReadResponse(bufio.NewReader(conn), nil)
	if err != nil {
		t.Fatalf("reading the response: %v", err)
	}
	defer res.Body.Close()
	b, _ := io.ReadAll(res.Body)
	return res, string(b)
}

// A webhook without a well-formed signature header is refused before its
// body is read: 24 MB of it cannot cost 24 MB of memory per connection.
func TestWebhookWithoutSignatureIsRefusedUnread(t *testing.T) {
	s := startLiveServer(t, nil)
	const size = 24 << 20
	for _, sig := range []string{"", "sha256=abc", "sha1=" + strings.Repeat("a", 40)} {
		t.Run("signature "+sig, func(t *testing.T) {
			conn := rawConn(t, s)
			io.WriteString(conn, webhookHead(sig, size))
			sent := sendBody(conn, size, false)
			res, body := readResponse(t, conn)
			if res.StatusCode != http.StatusUnauthorized {
				t.Fatalf("status %d %s; want 401", res.StatusCode, body)
			}
			// The server closes the connection rather than read the rest;
			// only socket buffers take more.
			if n := <-sent; n >= size {
				t.Fatalf("the server read the whole %d-byte body of an unsigned webhook", n)
			} else {
				t.Logf("%d of %d bytes sent before the server closed the connection", n, size)
			}
		})
	}
}

// A signed webhook over GitHub's 25 MB cap gets 413: unread when it says its
// length, cut at the limit when it is chunked.
func TestWebhookOverLimitIs413(t *testing.T) {
	s := startLiveServer(t, nil)
	sig := sign([]byte("not this body, but well-formed"))
	for _, chunked := range []bool{false, true} {
		t.Run(fmt.Sprintf("chunked=%v", chunked), func(t *testing.T) {
			conn := rawConn(t, s)
			size, length := int64(26<<20), int64(26<<20)
			if chunked {
				// Read up to the limit; more than socket buffers hold beyond.
				size, length = 64<<20, -1
			}
			io.WriteString(conn, webhookHead(sig, length))
			sent := sendBody(conn, size, chunked)
			res, body := readResponse(t, conn)
			if res.StatusCode != http.StatusRequestEntityTooLarge || !strings.Contains(body, "25 MB") {
				t.Fatalf("status %d %s; want 413 naming the limit", res.StatusCode, body)
			}
			if n := <-sent; n >= size {
				t.Fatalf("the server read the whole %d-byte oversized body", n)
			}
		})
	}
}

// A body trickled in (slowloris) is cut off by the server's read timeout,
// and the connection closed, long before the client is done.
func TestWebhookTrickledBodyIsCutOff(t *testing.T) {
	s := startLiveServer(t, func(s *web.Server) { s.ReadTimeout = 500 * time.Millisecond })
	conn := rawConn(t, s)
	const size = 80 // one byte every 100 ms: 8 s to send it all
	io.WriteString(conn, webhookHead(sign([]byte("x")), size))
	stopped := make(chan int, 1)
	go func() {
		n := 0
		for ; n < size; n++ {
			if _, err := conn.Write([]byte{'x'}); err != nil {
				break
			}
			time.Sleep(100 * time.Millisecond)
		}
		stopped <- n
	}()
	// Whatever the server answers, it must close the connection soon.
	conn.SetReadDeadline(time.Now().Add(6 * time.Second))
	rest, err := io.ReadAll(conn)
	var ne net.Error
	if errors.As(err, &ne) && ne.Timeout() {
		t.Fatalf("connection still open after 6 s of trickling (got %q)", rest)
	} else if err != nil && !errors.Is(err, syscall.ECONNRESET) {
		t.Fatal(err)
	}
	if strings.Contains(string(rest), "200 OK") {
		t.Fatalf("trickled body accepted: %q", rest)
	}
	conn.Close()
	if n := <-stopped; n >= size {
		t.Fatalf("the whole trickled body was sent")
	}
}

// An idle keep-alive connection is closed after the idle timeout.
func TestIdleKeepAliveIsClosed(t *testing.T) {
	s := startLiveServer(t, func(s *web.Server) { s.IdleTimeout = 300 * time.Millisecond })
	conn := rawConn(t, s)
	io.WriteString(conn, "GET /healthz HTTP/1.1\r\nHost: atoll.test\r\n\r\n")
	br := bufio.NewReader(conn)
	conn.SetReadDeadline(time.Now().Add(10 * time.Second))
	res, err := http.ReadResponse(br, nil)
	if err != nil {
		t.Fatal(err)
	}
	io.Copy(io.Discard, res.Body)
	res.Body.Close()
	if res.StatusCode != 200 || res.Close {
		t.Fatalf("healthz: status %d, close %v; want a kept-alive 200", res.StatusCode, res.Close)
	}
	conn.SetReadDeadline(time.Now().Add(5 * time.Second))
	if n, err := br.Read(make([]byte, 1)); err != io.EOF {
		t.Fatalf("idle connection: read %d, %v; want EOF (closed by the server)", n, err)
	}
}

// A signed webhook still goes through, on a kept-alive connection too.
func TestSignedWebhookAccepted(t *testing.T) {
	s := startLiveServer(t, nil)
	body := []byte(`{"zen":"Keep it logically awesome.","hook_id":1}`)
	for i := 0; i < 2; i++ {
		req, _ := http.NewRequest("POST", s.URL+"/events", bytes.NewReader(body))
		req.Header.Set("Content-Type", "application/json")
		req.Header.Set("X-GitHub-Event", "ping")
		req.Header.Set("X-Hub-Signature-256", sign(body))
		res, err := http.DefaultClient.Do(req)
		if err != nil {
			t.Fatal(err)
		}
		var out struct{ Queued bool }
		decodeBody(t, res, &out)
		if res.StatusCode != 200 {
			t.Fatalf("ping: status %d", res.StatusCode)
		}
	}
}

// Webhook bodies share a memory budget: one that does not fit waits, then
// gets 503 with Retry-After (GitHub shows it as a failed delivery to
// redeliver); a small one still fits beside a large one.
func TestWebhookBodyBudget(t *testing.T) {
	s := startLiveServer(t, func(s *web.Server) { s.WebhookMemory = 1000 })
	// A slow client holds 800 bytes of the budget while it trickles.
	slow := rawConn(t, s)
	io.WriteString(slow, webhookHead(sign([]byte("x")), 800))
	slow.Write([]byte("{"))
	time.Sleep(200 * time.Millisecond) // let the server reserve its budget

	small := []byte(`{"zen":"small","hook_id":1}`)
	req, _ := http.NewRequest("POST", s.URL+"/events", bytes.NewReader(small))
	req.Header.Set("X-GitHub-Event", "ping")
	req.Header.Set("X-Hub-Signature-256", sign(small))
	res, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	res.Body.Close()
	if res.StatusCode != 200 {
		t.Fatalf("small webhook beside a large one: status %d; want 200", res.StatusCode)
	}

	big := rawConn(t, s)
	io.WriteString(big, webhookHead(sign([]byte("x")), 800))
	res, body := readResponse(t, big)
	if res.StatusCode != http.StatusServiceUnavailable || res.Header.Get("Retry-After") == "" {
		t.Fatalf("webhook over the budget: status %d, Retry-After %q, %s; want 503 with Retry-After",
			res.StatusCode, res.Header.Get("Retry-After"), body)
	}
}

// A flood of badly signed webhooks logs one warning per remote host per
// interval, then one that counts the ones suppressed meanwhile.
func TestRejectedWebhookWarningsAreRateLimited(t *testing.T) {
	s := startLiveServer(t, func(s *web.Server) { s.WarnInterval = 500 * time.Millisecond })
	post := func() {
		body := []byte(`{"zen":"forged"}`)
		req, _ := http.NewRequest("POST", s.URL+"/events", bytes.NewReader(body))
		req.Header.Set("X-GitHub-Event", "ping")
		req.Header.Set("X-Hub-Signature-256", "sha256="+strings.Repeat("0", 64))
		res, err := http.DefaultClient.Do(req)
		if err != nil {
			t.Fatal(err)
		}
		res.Body.Close()
		if res.StatusCode != 401 {
			t.Fatalf("forged webhook: status %d; want 401", res.StatusCode)
		}
	}
	for i := 0; i < 5; i++ {
		post()
	}
	if warns := s.logs.records(t, "webhook rejected"); len(warns) != 1 {
		t.Fatalf("%d warnings for 5 rejected webhooks within the interval; want 1: %v", len(warns), warns)
	}
	time.Sleep(600 * time.Millisecond)
	post()
	warns := s.logs.records(t, "webhook rejected")
	if len(warns) != 2 || warns[1]["suppressed_since_last"] != float64(4) {
		t.Fatalf("after the interval: warnings %v; want a second one with suppressed_since_last 4", warns)
	}
}
