package worker

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"net/http"
	"net/url"
	"strconv"
	"strings"
	"sync"
	"time"

	"github.com/atollhq/atoll"
)

// Retry timing of transient failures: 100 ms doubling to 5 s, for up to
// JobRetryFor on a job call (the claim loop retries forever).
const (
	retryFirst  = 100 * time.Millisecond
	retryMax    = 5 * time.Second
	JobRetryFor = 10 * time.Minute
)

// maxBody caps what the client reads of an answer other than the plan.
const maxBody = 1 << 20

// Client speaks the worker protocol to the control plane. Servers are
// tried in turn: a transient failure (connection refused, 502, 503, 504,
// 413) moves on to the next one, since the active node may have changed.
type Client struct {
	Servers []string
	HTTP    *http.Client // nil: a client without a global timeout
	Logger  *slog.Logger
	// RetryFor bounds the retries of a job call (0: JobRetryFor). Tests
	// shorten it.
	RetryFor time.Duration

	mu  sync.Mutex
	cur int
}

// StatusError is a refusal of the control plane: its HTTP status and the
// message of its {"error": ...} body.
type StatusError struct {
	Status  int
	Message string
}

func (e *StatusError) Error() string {
	if e.Message == "" {
		return fmt.Sprintf("HTTP %d", e.Status)
	}
	return fmt.Sprintf("HTTP %d: %s", e.Status, e.Message)
}

// IsStatus reports whether err is a StatusError of status.
func IsStatus(err error, status int) bool {
	var se *StatusError
	return errors.As(err, &se) && se.Status == status
}

// transient reports whether a call's failure may go away on a retry,
// possibly against the next server.
func transient(err error) bool {
	var se *StatusError
	if errors.As(err, &se) {
		switch se.Status {
		case http.StatusRequestEntityTooLarge, http.StatusBadGateway, http.StatusServiceUnavailable, http.StatusGatewayTimeout:
			return true
		}
		return false
	}
	return err != nil
}

// server is the server calls go to now.
func (c *Client) server() string {
	c.mu.Lock()
	defer c.mu.Unlock()
	return strings.TrimRight(c.Servers[c.cur%len(c.Servers)], "/")
}

// rotate moves on to the next server after a failure of from.
func (c *Client) rotate(from string) {
	c.mu.Lock()
	defer c.mu.Unlock()
	if strings.TrimRight(c.Servers[c.cur%len(c.Servers)], "/") == from {
		c.cur = (c.cur + 1) % len(c.Servers)
	}
}

// call is one request: method path with bearer and body (JSON unless
// nil), retried on transient failures for up to retryFor (forever when
// negative). It returns the answer's status and body.
func (c *Client) call(ctx context.Context, method, path, bearer string, body []byte, retryFor time.Duration, timeout time.Duration) (int, []byte, error) {
	var deadline time.Time
	if retryFor >= 0 {
		deadline = time.Now().Add(retryFor)
	}
	wait := retryFirst
	for {
		server := c.server()
		status, answer, err := c.once(ctx, server, method, path, bearer, body, timeout)
		if err == nil || !transient(err) || ctx.Err() != nil {
			return status, answer, err
		}
		c.rotate(server)
		if !deadline.IsZero() && time.Now().Add(wait).After(deadline) {
			return status, answer, fmt.Errorf("%s %s: gave up after %s: %w", method, path, retryFor, err)
		}
		c.logger().Debug("worker: retrying", "call", path, "server", server, "err", err, "in", wait)
		select {
		case <-ctx.Done():
			return 0, nil, context.Cause(ctx)
		case <-time.After(wait):
		}
		wait = min(wait*2, retryMax)
	}
}

// once is one attempt at server.
func (c *Client) once(ctx context.Context, server, method, path, bearer string, body []byte, timeout time.Duration) (int, []byte, error) {
	ctx, cancel := context.WithTimeout(ctx, timeout)
	defer cancel()
	var rd io.Reader
	if body != nil {
		rd = bytes.NewReader(body)
	}
	req, err := http.NewRequestWithContext(ctx, method, server+path, rd)
	if err != nil {
		return 0, nil, err
	}
	req.Header.Set("Authorization", "Bearer "+bearer)
	if body != nil {
		req.Header.Set("Content-Type", "application/json")
	}
	resp, err := c.httpClient().Do(req)
	if err != nil {
		// The URL, never the request: its header holds the token.
		return 0, nil, fmt.Errorf("%s %s%s: %w", method, server, path, unwrapURL(err))
	}
	defer resp.Body.Close()
	limit := int64(maxBody)
	if resp.StatusCode == http.StatusOK && method == http.MethodGet {
		limit = 4 << 30 // a plan file
	}
	answer, err := io.ReadAll(io.LimitReader(resp.Body, limit))
	if err != nil {
		return 0, nil, fmt.Errorf("%s %s%s: reading the answer: %w", method, server, path, err)
	}
	if resp.StatusCode >= 300 {
		return resp.StatusCode, answer, &StatusError{Status: resp.StatusCode, Message: errorMessage(answer)}
	}
	return resp.StatusCode, answer, nil
}

// unwrapURL drops *url.Error's repetition of the method and URL.
func unwrapURL(err error) error {
	var ue *url.Error
	if errors.As(err, &ue) {
		return ue.Err
	}
	return err
}

// errorMessage is the message of an {"error": "..."} body, else the
// body's start.
func errorMessage(body []byte) string {
	var e struct {
		Error string `json:"error"`
	}
	if json.Unmarshal(body, &e) == nil && e.Error != "" {
		return e.Error
	}
	s := strings.TrimSpace(string(body))
	if len(s) > 200 {
		s = s[:200]
	}
	return s
}

func (c *Client) httpClient() *http.Client {
	if c.HTTP != nil {
		return c.HTTP
	}
	return http.DefaultClient
}

func (c *Client) logger() *slog.Logger {
	if c.Logger != nil {
		return c.Logger
	}
	return slog.Default()
}

func (c *Client) retryFor() time.Duration {
	if c.RetryFor > 0 {
		return c.RetryFor
	}
	return JobRetryFor
}

// callTimeout bounds one attempt of a job call (a plan download included).
const callTimeout = 5 * time.Minute

// Claim long-polls for a job of hello.Pool for up to wait: the assignment,
// or nil when none came. Transient failures are retried until ctx ends.
func (c *Client) Claim(ctx context.Context, secret string, hello atoll.WorkerHello, wait time.Duration) (*atoll.WorkerAssignment, error) {
	body, err := json.Marshal(hello)
	if err != nil {
		return nil, err
	}
	path := "/api/v1/workers/claim?wait=" + strconv.Itoa(int(wait/time.Second))
	status, answer, err := c.call(ctx, http.MethodPost, path, secret, body, -1, wait+30*time.Second)
	if err != nil || status == http.StatusNoContent {
		return nil, err
	}
	var a atoll.WorkerAssignment
	if err := json.Unmarshal(answer, &a); err != nil {
		return nil, fmt.Errorf("claim: the assignment does not parse: %w", err)
	}
	if a.JobID == 0 || a.JobToken == "" {
		return nil, errors.New("claim: the assignment names no job or job token")
	}
	return &a, nil
}

// jobPath is the path of a job call.
func jobPath(jobID int64, call string) string {
	return "/api/v1/workers/jobs/" + strconv.FormatInt(jobID, 10) + "/" + call
}

// Heartbeat extends the claim of job jobID; retried for up to lease.
func (c *Client) Heartbeat(ctx context.Context, jobID int64, jobToken string, lease time.Duration) (*atoll.WorkerLease, error) {
	_, answer, err := c.call(ctx, http.MethodPost, jobPath(jobID, "heartbeat"), jobToken, []byte("{}"), lease, time.Minute)
	if err != nil {
		return nil, err
	}
	var l atoll.WorkerLease
	if err := json.Unmarshal(answer, &l); err != nil {
		return nil, fmt.Errorf("heartbeat: the lease does not parse: %w", err)
	}
	return &l, nil
}

// Logs sends a batch of the job's lines; it returns once they are stored.
func (c *Client) Logs(ctx context.Context, jobID int64, jobToken string, lines []atoll.WorkerLogLine) error {
	body, err := json.Marshal(struct {
		Lines []atoll.WorkerLogLine `json:"lines"`
	}{lines})
	if err != nil {
		return err
	}
	_, _, err = c.call(ctx, http.MethodPost, jobPath(jobID, "logs"), jobToken, body, c.retryFor(), time.Minute)
	return err
}

// Applying asks whether the job's apply may start.
func (c *Client) Applying(ctx context.Context, jobID int64, jobToken string) error {
	_, _, err := c.call(ctx, http.MethodPost, jobPath(jobID, "applying"), jobToken, []byte("{}"), c.retryFor(), time.Minute)
	return err
}

// Plan downloads the plan file an apply job applies.
func (c *Client) Plan(ctx context.Context, jobID int64, jobToken string) ([]byte, error) {
	_, answer, err := c.call(ctx, http.MethodGet, jobPath(jobID, "plan"), jobToken, nil, c.retryFor(), callTimeout)
	return answer, err
}

// Result reports the job's end.
func (c *Client) Result(ctx context.Context, jobID int64, jobToken string, res atoll.WorkerResult) error {
	body, err := json.Marshal(res)
	if err != nil {
		return err
	}
	_, _, err = c.call(ctx, http.MethodPost, jobPath(jobID, "result"), jobToken, body, c.retryFor(), callTimeout)
	return err
}

// GitURL is the git smart HTTP URL of job jobID's repository at the
// current server.
func (c *Client) GitURL(jobID int64) string {
	return c.server() + jobPath(jobID, "git")
}
