package drift

import (
	"encoding/json"
	"reflect"
	"testing"
	"time"
)

var when = time.Date(2026, 1, 2, 3, 4, 5, 6, time.UTC)

func mustJSON(t *testing.T, v any) string {
	t.Helper()
	b, err := json.Marshal(v)
	if err != nil {
		t.Fatalf("marshal %T: %v", v, err)
	}
	return string(b)
}

// TestEnvelopeJSON: Atlantis's alpha drift API (v0.47) always writes all
// five envelope keys; its tests look for "error":null in a success and
// "data":null in a failure, and details is left out when there are none.
func TestEnvelopeJSON(t *testing.T) {
	for _, tc := range []struct {
		name string
		env  Envelope
		want string
	}{
		{"success", OK(map[string]int{"x": 1}, "req-1", when),
			`{"success":true,"data":{"x":1},"error":null,"request_id":"req-1","timestamp":"2026-01-02T03:04:05.000000006Z"}`},
		{"success without data", OK(nil, "req-1", when),
			`{"success":true,"data":null,"error":null,"request_id":"req-1","timestamp":"2026-01-02T03:04:05.000000006Z"}`},
		{"validation failure", Fail(CodeValidation, "missing required parameter",
			[]FieldError{{"repository", "repository parameter is required"}}, "req-2", when),
			`{"success":false,"data":null,"error":{"code":"VALIDATION_ERROR","message":"missing required parameter",` +
				`"details":[{"field":"repository","message":"repository parameter is required"}]},` +
				`"request_id":"req-2","timestamp":"2026-01-02T03:04:05.000000006Z"}`},
		{"failure without details", Fail(CodeUnauthorized, "invalid or missing API token", nil, "req-3", when),
			`{"success":false,"data":null,"error":{"code":"UNAUTHORIZED","message":"invalid or missing API token"},` +
				`"request_id":"req-3","timestamp":"2026-01-02T03:04:05.000000006Z"}`},
		{"failure with empty field errors", Fail(CodeValidation, "validation failed", []FieldError{}, "req-4", when),
			`{"success":false,"data":null,"error":{"code":"VALIDATION_ERROR","message":"validation failed"},` +
				`"request_id":"req-4","timestamp":"2026-01-02T03:04:05.000000006Z"}`},
		{"internal error", Fail(CodeInternal, MsgInternal, nil, "", when),
			`{"success":false,"data":null,"error":{"code":"INTERNAL_ERROR","message":"internal server error"},` +
				`"request_id":"","timestamp":"2026-01-02T03:04:05.000000006Z"}`},
	} {
		if got := mustJSON(t, tc.env); got != tc.want {
			t.Errorf("%s:\n got %s\nwant %s", tc.name, got, tc.want)
		}
	}
}

// TestStatusOf: Atlantis's alpha drift API (v0.47) sends each error code
// with one HTTP status.
func TestStatusOf(t *testing.T) {
	for _, tc := range []struct {
		code   string
		status int
	}{
		{"VALIDATION_ERROR", 400},
		{"UNAUTHORIZED", 401},
		{"FORBIDDEN", 403},
		{"NOT_FOUND", 404},
		{"CONFLICT", 409},
		{"RATE_LIMITED", 429},
		{"INTERNAL_ERROR", 500},
		{"SERVICE_UNAVAILABLE", 503},
		{"SOMETHING_ELSE", 500},
	} {
		if got := StatusOf(tc.code); got != tc.status {
			t.Errorf("StatusOf(%q) = %d, want %d", tc.code, got, tc.status)
		}
	}
}

// TestCheckScope: Atlantis's alpha drift API (v0.47) checks the read
// routes' repository and type query parameters in this order and with
// these messages and details (its tests: no query, no type,
// BitbucketCloud, repository "owner").
func TestCheckScope(t *testing.T) {
	for _, tc := range []struct {
		name, repository, vcsType string
		want                      *EnvelopeError
	}{
		{"nothing", "", "", &EnvelopeError{"VALIDATION_ERROR", "missing required parameter",
			[]FieldError{{"repository", "repository parameter is required"}}}},
		{"no repository", "", Github, &EnvelopeError{"VALIDATION_ERROR", "missing required parameter",
			[]FieldError{{"repository", "repository parameter is required"}}}},
		{"no type", "owner/repo", "", &EnvelopeError{"VALIDATION_ERROR", "missing required parameter",
			[]FieldError{{"type", "type parameter is required"}}}},
		{"unknown type", "owner/repo", "Bogus", &EnvelopeError{"VALIDATION_ERROR", "invalid VCS type",
			[]FieldError{{"type", `"Bogus" is not a valid type`}}}},
		{"BitbucketCloud", "owner/repo", BitbucketCloud, &EnvelopeError{"VALIDATION_ERROR", "unsupported VCS type",
			[]FieldError{{"type", "type must be one of: Github, Gitlab, Gitea"}}}},
		{"bad repository", "owner", Github, &EnvelopeError{"VALIDATION_ERROR", "invalid repository",
			[]FieldError{{"repository", "repository must be a valid repository path for the VCS type"}}}},
		{"GitHub", "owner/repo", Github, nil},
		{"GitLab", "Repo", Gitlab, nil},
	} {
		if got := CheckScope(tc.repository, tc.vcsType); !reflect.DeepEqual(got, tc.want) {
			t.Errorf("%s: CheckScope(%q, %q) = %+v, want %+v", tc.name, tc.repository, tc.vcsType, got, tc.want)
		}
	}
}

// TestCheckPathFilter: Atlantis's alpha drift API (v0.47) cleans the
// status route's path filter (./modules/vpc/ finds modules/vpc) and
// refuses ../env and envs/*.
func TestCheckPathFilter(t *testing.T) {
	bad := &EnvelopeError{"VALIDATION_ERROR", "invalid path filter",
		[]FieldError{{"path", "path must be a clean repo-relative path"}}}
	for _, tc := range []struct {
		in, want string
		err      *EnvelopeError
	}{
		{"", "", nil},
		{"./modules/vpc/", "modules/vpc", nil},
		{".", ".", nil},
		{"../env", "", bad},
		{"envs/*", "", bad},
		{"   ", "", bad},
	} {
		got, err := CheckPathFilter(tc.in)
		if got != tc.want || !reflect.DeepEqual(err, tc.err) {
			t.Errorf("CheckPathFilter(%q) = %q, %+v, want %q, %+v", tc.in, got, err, tc.want, tc.err)
		}
	}
}

// TestParseLimit: Atlantis's alpha drift history route (v0.47) defaults
// to 10, caps at 100, and refuses 5abc, 5+6, abc, an empty value, 0 and
// -1.
func TestParseLimit(t *testing.T) {
	bad := &EnvelopeError{"VALIDATION_ERROR", "invalid limit parameter",
		[]FieldError{{"limit", "must be a positive integer"}}}
	for _, tc := range []struct {
		raw     string
		present bool
		want    int
		err     *EnvelopeError
	}{
		{"", false, 10, nil},
		{"5", true, 5, nil},
		{" 7 ", true, 7, nil},
		{"100", true, 100, nil},
		{"101", true, 100, nil},
		{"100000", true, 100, nil},
		{"5abc", true, 0, bad},
		{"5+6", true, 0, bad},
		{"abc", true, 0, bad},
		{"", true, 0, bad},
		{"0", true, 0, bad},
		{"-1", true, 0, bad},
	} {
		got, err := ParseLimit(tc.raw, tc.present)
		if got != tc.want || !reflect.DeepEqual(err, tc.err) {
			t.Errorf("ParseLimit(%q, %v) = %d, %+v, want %d, %+v", tc.raw, tc.present, got, err, tc.want, tc.err)
		}
	}
}

// TestResultNotFound: Atlantis's alpha drift API (v0.47) repeats the
// prefix of its not-found message for an unknown remediation id.
func TestResultNotFound(t *testing.T) {
	got := mustJSON(t, ResultNotFound("abc"))
	want := `{"code":"NOT_FOUND","message":"remediation result not found: remediation result not found: abc"}`
	if got != want {
		t.Errorf("got %s, want %s", got, want)
	}
}
