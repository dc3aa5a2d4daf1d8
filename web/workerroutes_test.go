package web_test

import (
	"bytes"
	"compress/gzip"
	"context"
	"encoding/json"
	"io"
	"log/slog"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"
	"time"

	"github.com/atollhq/atoll"
	"github.com/atollhq/atoll/mock"
	"github.com/atollhq/atoll/web"
)

// workerHandler serves ws as the worker protocol, with the real
// middleware and no database: the worker routes need none of their own.
func workerHandler(ws atoll.WorkerService) http.Handler {
	s := &web.Server{Workers: ws, Logger: slog.New(slog.NewTextHandler(io.Discard, nil))}
	return s.Handler()
}

// workerCall makes one call of the worker protocol; header is pairs.
func workerCall(t *testing.T, h http.Handler, method, path string, body io.Reader, header ...string) *httptest.ResponseRecorder {
	t.Helper()
	if body == nil {
		body = http.NoBody
	}
	req := httptest.NewRequest(method, path, body)
	for i := 0; i+1 < len(header); i += 2 {
		req.Header.Set(header[i], header[i+1])
	}
	w := httptest.NewRecorder()
	h.ServeHTTP(w, req)
	return w
}

// workerError is the {"error"} of a JSON error answer.
func workerError(t *testing.T, w *httptest.ResponseRecorder) string {
	t.Helper()
	var e struct{ Error string }
	if err := json.Unmarshal(w.Body.Bytes(), &e); err != nil || e.Error == "" {
		t.Fatalf("not a JSON error (%d, %q): %q", w.Code, w.Header().Get("Content-Type"), w.Body.String())
	}
	return e.Error
}

// refusingWorkers is a worker service every method of which fails the
// test: for calls the routes must refuse before calling it.
func refusingWorkers(t *testing.T) *mock.WorkerService {
	fail := func(what string) { t.Helper(); t.Errorf("the service's %s was called", what) }
	return &mock.WorkerService{
		ClaimFn: func(context.Context, string, atoll.WorkerHello, time.Duration) (*atoll.WorkerAssignment, error) {
			fail("Claim")
			return nil, nil
		},
		HeartbeatFn: func(context.Context, int64, string) (*atoll.WorkerLease, error) {
			fail("Heartbeat")
			return &atoll.WorkerLease{}, nil
		},
		LogsFn:     func(context.Context, int64, string, []atoll.WorkerLogLine) error { fail("Logs"); return nil },
		ApplyingFn: func(context.Context, int64, string) error { fail("Applying"); return nil },
		PlanFn:     func(context.Context, int64, string) ([]byte, error) { fail("Plan"); return nil, nil },
		ResultFn:   func(context.Context, int64, string, atoll.WorkerResult) error { fail("Result"); return nil },
		UploadPackFn: func(context.Context, int64, string, bool, string, io.Reader, io.Writer) error {
			fail("UploadPack")
			return nil
		},
	}
}

// workerRoute is one worker route, called with a harmless body.
type workerRoute struct{ method, path, body string }

func workerRoutesOf(id string) []workerRoute {
	job := "/api/v1/workers/jobs/" + id
	return []workerRoute{
		{"POST", "/api/v1/workers/claim", `{"worker":"w1","pool":"eu","version":"v1","protocol":1}`},
		{"POST", job + "/heartbeat", ""},
		{"POST", job + "/logs", `{"lines":[]}`},
		{"POST", job + "/applying", ""},
		{"GET", job + "/plan", ""},
		{"POST", job + "/result", `{"result":{}}`},
		{"GET", job + "/git/info/refs?service=git-upload-pack", ""},
		{"POST", job + "/git/git-upload-pack", "0000"},
	}
}

// A server without worker pools answers every worker route 404 JSON,
// whoever calls.
func TestWorkerRoutesWithoutPools(t *testing.T) {
	h := workerHandler(nil)
	for _, rt := range workerRoutesOf("7") {
		for _, auth := range []string{"", "Bearer secret"} {
			w := workerCall(t, h, rt.method, rt.path, strings.NewReader(rt.body), "Authorization", auth)
			if w.Code != 404 || workerError(t, w) != "This server has no worker pools." {
				t.Errorf("%s %s (auth %q) = %d %s", rt.method, rt.path, auth, w.Code, w.Body)
			}
		}
	}
}

// Without a bearer token, or with a malformed one, every worker route
// answers 401 and the service is not called; so does a job call on
// something that is not a job id (400).
func TestWorkerRoutesRefuseBeforeTheService(t *testing.T) {
	h := workerHandler(refusingWorkers(t))
	for _, auth := range []string{"", "Bearer", "Bearer ", "Basic d29ya2VyOnNlY3JldA==", "Token secret", "Bearer two words"} {
		for _, rt := range workerRoutesOf("7") {
			w := workerCall(t, h, rt.method, rt.path, strings.NewReader(rt.body), "Authorization", auth)
			if w.Code != 401 || !strings.Contains(workerError(t, w), "Bearer") || w.Header().Get("WWW-Authenticate") == "" {
				t.Errorf("%s %s with Authorization %q = %d %s", rt.method, rt.path, auth, w.Code, w.Body)
			}
		}
	}
	for _, id := range []string{"0", "-1", "abc", "1.5", "99999999999999999999"} {
		for _, rt := range workerRoutesOf(id)[1:] {
			w := workerCall(t, h, rt.method, rt.path, strings.NewReader(rt.body), "Authorization", "Bearer job-token")
			if w.Code != 400 || !strings.Contains(workerError(t, w), "job id") {
				t.Errorf("%s %s = %d %s", rt.method, rt.path, w.Code, w.Body)
			}
		}
	}
}

// A claim hands the service the worker token, the hello and the wait,
// and answers the assignment, or 204 when no job came.
func TestWorkerClaim(t *testing.T) {
	var gotSecret string
	var gotHello atoll.WorkerHello
	var gotWait time.Duration
	var answer *atoll.WorkerAssignment
	ws := refusingWorkers(t)
	ws.ClaimFn = func(_ context.Context, secret string, hello atoll.WorkerHello, wait time.Duration) (*atoll.WorkerAssignment, error) {
		gotSecret, gotHello, gotWait = secret, hello, wait
		return answer, nil
	}
	h := workerHandler(ws)
	hello := `{"worker":"w1","pool":"eu","version":"v1.2.3","protocol":1}`
	answer = &atoll.WorkerAssignment{JobID: 7, JobToken: "jt", LeaseSeconds: 60, Attempt: 1, Spec: json.RawMessage(`{"kind":"plan"}`)}
	w := workerCall(t, h, "POST", "/api/v1/workers/claim", strings.NewReader(hello), "Authorization", "bearer  wsecret ")
	var got atoll.WorkerAssignment
	var spec bytes.Buffer
	if w.Code != 200 || json.Unmarshal(w.Body.Bytes(), &got) != nil || json.Compact(&spec, got.Spec) != nil ||
		got.JobID != 7 || got.JobToken != "jt" || spec.String() != `{"kind":"plan"}` {
		t.Fatalf("claim = %d %s", w.Code, w.Body)
	}
	if gotSecret != "wsecret" || gotHello != (atoll.WorkerHello{Worker: "w1", Pool: "eu", Version: "v1.2.3", Protocol: 1}) || gotWait != 25*time.Second {
		t.Errorf("Claim(%q, %+v, %v)", gotSecret, gotHello, gotWait)
	}
	answer = nil
	for q, want := range map[string]time.Duration{"?wait=0": 0, "?wait=5": 5 * time.Second, "?wait=30": 30 * time.Second, "?wait=3600": 30 * time.Second} {
		w := workerCall(t, h, "POST", "/api/v1/workers/claim"+q, strings.NewReader(hello), "Authorization", "Bearer wsecret")
		if w.Code != 204 || w.Body.Len() != 0 || gotWait != want {
			t.Errorf("claim%s = %d %q, wait %v, want 204 and %v", q, w.Code, w.Body, gotWait, want)
		}
	}

	// Refused before the service: a bad wait, a body that is not a hello.
	ws.ClaimFn = refusingWorkers(t).ClaimFn
	for _, tc := range []struct {
		query, body string
		status      int
		msg         string
	}{
		{"?wait=-1", hello, 400, "wait"},
		{"?wait=abc", hello, 400, "wait"},
		{"?wait=", hello, 400, "wait"},
		{"?wait=1&wait=2", hello, 400, "wait"},
		{"", `{"worker":"w1","pool":"eu","protocol":1,"extra":true}`, 400, "Unknown field"},
		{"", `{"worker":"w1"} {}`, 400, "more after"},
		{"", ``, 400, "empty"},
		{"", `{"worker":"` + strings.Repeat("w", 5000) + `"}`, 413, "too large"},
	} {
		w := workerCall(t, h, "POST", "/api/v1/workers/claim"+tc.query, strings.NewReader(tc.body), "Authorization", "Bearer wsecret")
		if w.Code != tc.status || !strings.Contains(workerError(t, w), tc.msg) {
			t.Errorf("claim%s %.40q = %d %s, want %d %q", tc.query, tc.body, w.Code, w.Body, tc.status, tc.msg)
		}
	}
}

// The service's errors are answered with the status of their code and
// their message; an internal error's message is not shown.
func TestWorkerRouteErrors(t *testing.T) {
	for code, status := range map[string]int{
		atoll.EUNAUTHORIZED: 401, atoll.EFORBIDDEN: 403, atoll.EINVALID: 400, atoll.ECONFLICT: 409,
		atoll.EUNAVAILABLE: 503, atoll.ETOOLARGE: 413, atoll.ENOTFOUND: 404,
	} {
		fail := atoll.Errorf(code, "refused: %s", code)
		ws := &mock.WorkerService{
			ClaimFn: func(context.Context, string, atoll.WorkerHello, time.Duration) (*atoll.WorkerAssignment, error) {
				return nil, fail
			},
			HeartbeatFn:  func(context.Context, int64, string) (*atoll.WorkerLease, error) { return nil, fail },
			LogsFn:       func(context.Context, int64, string, []atoll.WorkerLogLine) error { return fail },
			ApplyingFn:   func(context.Context, int64, string) error { return fail },
			PlanFn:       func(context.Context, int64, string) ([]byte, error) { return nil, fail },
			ResultFn:     func(context.Context, int64, string, atoll.WorkerResult) error { return fail },
			UploadPackFn: func(context.Context, int64, string, bool, string, io.Reader, io.Writer) error { return fail },
		}
		h := workerHandler(ws)
		for _, rt := range workerRoutesOf("7") {
			w := workerCall(t, h, rt.method, rt.path, strings.NewReader(rt.body), "Authorization", "Bearer tok")
			if w.Code != status || workerError(t, w) != "refused: "+code || !strings.HasPrefix(w.Header().Get("Content-Type"), "application/json") {
				t.Errorf("%s %s with %s = %d %q %s, want %d", rt.method, rt.path, code, w.Code, w.Header().Get("Content-Type"), w.Body, status)
			}
		}
	}
	ws := refusingWorkers(t)
	ws.HeartbeatFn = func(context.Context, int64, string) (*atoll.WorkerLease, error) {
		return nil, io.ErrUnexpectedEOF // no code: internal
	}
	w := workerCall(t, workerHandler(ws), "POST", "/api/v1/workers/jobs/7/heartbeat", nil, "Authorization", "Bearer tok")
	if w.Code != 500 || workerError(t, w) != "Internal error." {
		t.Errorf("internal error = %d %s", w.Code, w.Body)
	}
}

// Each job call hands the service the job id, the job token and what it
// sent, and answers as the protocol says.
func TestWorkerJobCalls(t *testing.T) {
	type call struct {
		id    int64
		token string
	}
	var got call
	var gotLines []atoll.WorkerLogLine
	var gotResult atoll.WorkerResult
	lease := time.Date(2026, 1, 2, 3, 4, 5, 0, time.UTC)
	ws := &mock.WorkerService{
		HeartbeatFn: func(_ context.Context, id int64, token string) (*atoll.WorkerLease, error) {
			got = call{id, token}
			return &atoll.WorkerLease{LeaseExpiresAt: lease}, nil
		},
		LogsFn: func(_ context.Context, id int64, token string, lines []atoll.WorkerLogLine) error {
			got, gotLines = call{id, token}, lines
			return nil
		},
		ApplyingFn: func(_ context.Context, id int64, token string) error { got = call{id, token}; return nil },
		PlanFn: func(_ context.Context, id int64, token string) ([]byte, error) {
			got = call{id, token}
			return []byte("PK\x03\x04plan"), nil
		},
		ResultFn: func(_ context.Context, id int64, token string, res atoll.WorkerResult) error {
			got, gotResult = call{id, token}, res
			return nil
		},
	}
	h := workerHandler(ws)
	auth := []string{"Authorization", "Bearer job-tok"}
	want := call{42, "job-tok"}
	job := "/api/v1/workers/jobs/42"

	w := workerCall(t, h, "POST", job+"/heartbeat", nil, auth...)
	var l atoll.WorkerLease
	if w.Code != 200 || json.Unmarshal(w.Body.Bytes(), &l) != nil || !l.LeaseExpiresAt.Equal(lease) || got != want {
		t.Errorf("heartbeat = %d %s, call %+v", w.Code, w.Body, got)
	}

	got = call{}
	w = workerCall(t, h, "POST", job+"/logs", strings.NewReader(`{"lines":[{"seq":1,"stream":"stdout","time":"2026-01-02T03:04:05Z","text":"hello"},{"seq":2,"stream":"stderr","time":"2026-01-02T03:04:06Z","text":"oops"}]}`), auth...)
	if w.Code != 204 || got != want || len(gotLines) != 2 || gotLines[0].Text != "hello" || gotLines[1].Seq != 2 || gotLines[1].Stream != "stderr" {
		t.Errorf("logs = %d %s, call %+v %+v", w.Code, w.Body, got, gotLines)
	}

	got = call{}
	w = workerCall(t, h, "POST", job+"/applying", nil, auth...)
	if w.Code != 204 || got != want {
		t.Errorf("applying = %d %s, call %+v", w.Code, w.Body, got)
	}

	got = call{}
	w = workerCall(t, h, "GET", job+"/plan", nil, auth...)
	if w.Code != 200 || w.Body.String() != "PK\x03\x04plan" || w.Header().Get("Content-Type") != "application/octet-stream" || got != want {
		t.Errorf("plan = %d %q %q, call %+v", w.Code, w.Header().Get("Content-Type"), w.Body, got)
	}

	got = call{}
	w = workerCall(t, h, "POST", job+"/result", strings.NewReader(`{"result":{"ok":true},"plan_sha256":"abc","error":{"Code":"invalid","Message":"bad"}}`), auth...)
	if w.Code != 204 || got != want || string(gotResult.Result) != `{"ok":true}` || gotResult.PlanSHA256 != "abc" ||
		gotResult.Error == nil || gotResult.Error.Message != "bad" {
		t.Errorf("result = %d %s, call %+v %+v", w.Code, w.Body, got, gotResult)
	}

	// Bodies refused before the service.
	h = workerHandler(refusingWorkers(t))
	for _, tc := range []struct {
		path, body string
		status     int
		msg        string
	}{
		{"/logs", `{"lines":[],"more":1}`, 400, "Unknown field"},
		{"/logs", `{"lines":[{"seq":"one"}]}`, 400, "seq"},
		{"/logs", `{"lines":[{"seq":1,"text":"` + strings.Repeat("x", 1<<20) + `"}]}`, 413, "too large"},
		{"/result", `{"result":{},"extra":1}`, 400, "Unknown field"},
		{"/result", `not json`, 400, "not valid JSON"},
	} {
		w := workerCall(t, h, "POST", job+tc.path, strings.NewReader(tc.body), auth...)
		if w.Code != tc.status || !strings.Contains(workerError(t, w), tc.msg) {
			t.Errorf("%s %.40q = %d %.200s, want %d %q", tc.path, tc.body, w.Code, w.Body, tc.status, tc.msg)
		}
	}
}

// git's smart HTTP: the advertisement of fetches only, and the
// upload-pack answer to a request, gunzipped when gzipped, with the
// client's Git-Protocol; both streamed, never cached.
func TestWorkerGit(t *testing.T) {
	type pack struct {
		id                 int64
		token, proto, body string
		advertise          bool
	}
	var got pack
	ws := refusingWorkers(t)
	ws.UploadPackFn = func(_ context.Context, id int64, token string, advertise bool, proto string, in io.Reader, out io.Writer) error {
		b, err := io.ReadAll(in)
		if err != nil {
			return err
		}
		got = pack{id, token, proto, string(b), advertise}
		if advertise {
			io.WriteString(out, "001e# service=git-upload-pack\n0000")
		} else {
			io.WriteString(out, "0008NAK\nPACK")
		}
		return nil
	}
	h := workerHandler(ws)
	job := "/api/v1/workers/jobs/9/git"
	auth := []string{"Authorization", "Bearer jt", "Git-Protocol", "version=2"}

	w := workerCall(t, h, "GET", job+"/info/refs?service=git-upload-pack", nil, auth...)
	if w.Code != 200 || w.Header().Get("Content-Type") != "application/x-git-upload-pack-advertisement" ||
		w.Header().Get("Cache-Control") != "no-cache" || !strings.HasPrefix(w.Body.String(), "001e# service") ||
		got != (pack{9, "jt", "version=2", "", true}) {
		t.Errorf("info/refs = %d %v %q, call %+v", w.Code, w.Header(), w.Body, got)
	}
	for _, q := range []string{"?service=git-receive-pack", "", "?service=git-upload-pack&service=x"} {
		got = pack{}
		w := workerCall(t, h, "GET", job+"/info/refs"+q, nil, auth...)
		if w.Code != 403 || workerError(t, w) != "Only fetches are served." || got != (pack{}) {
			t.Errorf("info/refs%s = %d %s", q, w.Code, w.Body)
		}
	}

	request := "0032want 0123456789012345678901234567890123456789\n00000009done\n"
	var gz bytes.Buffer
	zw := gzip.NewWriter(&gz)
	zw.Write([]byte(request))
	zw.Close()
	for _, tc := range []struct {
		name, encoding string
		body           []byte
	}{{"plain", "", []byte(request)}, {"gzip", "gzip", gz.Bytes()}} {
		got = pack{}
		// git's own media type and no Origin: out of the form checks.
		w := workerCall(t, h, "POST", job+"/git-upload-pack", bytes.NewReader(tc.body),
			append(auth, "Content-Type", "application/x-git-upload-pack-request", "Content-Encoding", tc.encoding)...)
		if w.Code != 200 || w.Header().Get("Content-Type") != "application/x-git-upload-pack-result" ||
			w.Header().Get("Cache-Control") != "no-cache" || w.Body.String() != "0008NAK\nPACK" ||
			got != (pack{9, "jt", "version=2", request, false}) {
			t.Errorf("%s upload-pack = %d %v %q, call %+v", tc.name, w.Code, w.Header(), w.Body, got)
		}
	}
	got = pack{}
	w = workerCall(t, h, "POST", job+"/git-upload-pack", strings.NewReader("not gzip"), append(auth, "Content-Encoding", "gzip")...)
	if w.Code != 400 || got != (pack{}) {
		t.Errorf("upload-pack with a bad gzip body = %d %s", w.Code, w.Body)
	}
}

// A failure of upload-pack before its answer began is a JSON error; one
// after breaks the connection, so that git never takes a short pack for
// a whole one.
func TestWorkerUploadPackFailure(t *testing.T) {
	var started bool
	ws := refusingWorkers(t)
	ws.UploadPackFn = func(_ context.Context, _ int64, _ string, _ bool, _ string, _ io.Reader, out io.Writer) error {
		if started {
			io.WriteString(out, "0008NAK\nPACK partial")
			out.(http.Flusher).Flush()
		}
		return atoll.Errorf(atoll.ECONFLICT, "The claim is not held.")
	}
	srv := httptest.NewServer(workerHandler(ws))
	defer srv.Close()
	post := func() (*http.Response, []byte, error) {
		req, _ := http.NewRequest("POST", srv.URL+"/api/v1/workers/jobs/9/git/git-upload-pack", strings.NewReader("0000"))
		req.Header.Set("Authorization", "Bearer jt")
		res, err := http.DefaultClient.Do(req)
		if err != nil {
			return nil, nil, err
		}
		defer res.Body.Close()
		b, err := io.ReadAll(res.Body)
		return res, b, err
	}
	res, b, err := post()
	if err != nil || res.StatusCode != 409 || !strings.Contains(string(b), "The claim is not held.") {
		t.Errorf("failure before the answer = %v %s %v", res, b, err)
	}
	started = true
	if _, b, err := post(); err == nil {
		t.Errorf("failure after the answer began read as a whole answer: %q", b)
	}
}

// The worker routes pass the authentication middleware as /events does,
// with no session or API token (their own bearer tokens are no API
// tokens: none is looked up); nothing else under /api/v1/workers/ does.
func TestWorkerRoutesAuthMiddleware(t *testing.T) {
	ws := &mock.WorkerService{
		HeartbeatFn: func(context.Context, int64, string) (*atoll.WorkerLease, error) { return &atoll.WorkerLease{}, nil },
	}
	// No database: a lookup of the bearer token as an API token, or of a
	// session, would panic.
	h := workerHandler(ws)
	w := workerCall(t, h, "POST", "/api/v1/workers/jobs/1/heartbeat", nil, "Authorization", "Bearer jt", "Cookie", "atoll_session=x",
		"Origin", "https://elsewhere.example", "Sec-Fetch-Site", "cross-site")
	if w.Code != 200 {
		t.Errorf("heartbeat through the middleware = %d %s", w.Code, w.Body)
	}
	for _, p := range []string{"/api/v1/workers", "/api/v1/workers/", "/api/v1/workers/tokens", "/api/v1/workers/claim/",
		"/api/v1/workers/jobs/1", "/api/v1/workers/jobs/1/", "/api/v1/workers/jobs/1/heartbeat/x", "/api/v1/workers/jobs//heartbeat",
		"/api/v1/workers/jobs/1/git/info", "/api/v1/workers/jobs/1/git/receive-pack", "/api/v1/workersx/claim"} {
		for _, m := range []string{"GET", "POST"} {
			w := workerCall(t, h, m, p, nil)
			if w.Code != 401 || !strings.Contains(workerError(t, w), "Sign in first") {
				t.Errorf("%s %s without a session = %d %s: not gated", m, p, w.Code, w.Body)
			}
		}
	}
}

// An upload-pack request is bounded after gunzip: a small gzipped body
// that inflates past the limit is 413, whatever the service read.
func TestWorkerUploadPackInflateBound(t *testing.T) {
	ws := refusingWorkers(t)
	var read int64
	ws.UploadPackFn = func(_ context.Context, _ int64, _ string, _ bool, _ string, in io.Reader, _ io.Writer) error {
		n, err := io.Copy(io.Discard, in)
		read = n
		return err
	}
	var gz bytes.Buffer
	zw, _ := gzip.NewWriterLevel(&gz, gzip.BestSpeed)
	zeros := make([]byte, 1<<20)
	for i := 0; i < 65; i++ { // 65 MiB, over the 64 MiB bound
		zw.Write(zeros)
	}
	zw.Close()
	w := workerCall(t, workerHandler(ws), "POST", "/api/v1/workers/jobs/9/git/git-upload-pack", &gz,
		"Authorization", "Bearer jt", "Content-Encoding", "gzip")
	if w.Code != 413 || !strings.Contains(workerError(t, w), "too large") || read != 64<<20 {
		t.Errorf("inflated upload-pack request = %d %s, service read %d", w.Code, w.Body, read)
	}
}

// countingReader counts the bytes read from it.
type countingReader struct {
	r io.Reader
	n int
}

func (c *countingReader) Read(p []byte) (int, error) {
	n, err := c.r.Read(p)
	c.n += n
	return n, err
}

// A result whose job token does not hold the job is refused before its
// body is read: nobody else makes the server read up to maxWorkerResult.
func TestWorkerResultBodyReadOnlyForTheHolder(t *testing.T) {
	ws := refusingWorkers(t)
	ws.HoldsFn = func(context.Context, int64, string) error {
		return atoll.Errorf(atoll.ECONFLICT, "This job token does not hold job 7.")
	}
	body := &countingReader{r: strings.NewReader(`{"result":{"output":"` + strings.Repeat("x", 1<<20) + `"}}`)}
	w := workerCall(t, workerHandler(ws), "POST", "/api/v1/workers/jobs/7/result", body, "Authorization", "Bearer atj_other")
	if w.Code != http.StatusConflict || body.n > 64<<10 {
		t.Fatalf("result with a token that does not hold the job = %d %s, %d bytes read", w.Code, w.Body, body.n)
	}
}
