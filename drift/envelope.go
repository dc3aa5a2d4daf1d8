package drift

import (
	"net/http"
	"strconv"
	"strings"
	"time"
)

// Envelope wraps every drift API response, success or failure, so a client
// reads one shape. Data and Error are always written, as null when unset:
// Atlantis clients test for "error":null and "data":null.
type Envelope struct {
	Success   bool           `json:"success"`
	Data      any            `json:"data"`
	Error     *EnvelopeError `json:"error"`
	RequestID string         `json:"request_id"`
	Timestamp time.Time      `json:"timestamp"`
}

// EnvelopeError is a failed response's error. Details is a []FieldError
// for validation errors and the whole RemediationResult for a failed
// remediation (409); it is left out when there is none.
type EnvelopeError struct {
	Code    string `json:"code"`
	Message string `json:"message"`
	Details any    `json:"details,omitempty"`
}

// The error codes of the envelope; StatusOf gives each one's HTTP status.
const (
	CodeValidation         = "VALIDATION_ERROR"
	CodeUnauthorized       = "UNAUTHORIZED"
	CodeForbidden          = "FORBIDDEN"
	CodeNotFound           = "NOT_FOUND"
	CodeConflict           = "CONFLICT"
	CodeRateLimited        = "RATE_LIMITED"
	CodeInternal           = "INTERNAL_ERROR"
	CodeServiceUnavailable = "SERVICE_UNAVAILABLE"
)

// The envelope messages that do not carry a varying part, worded as
// Atlantis words them.
const (
	// MsgInternal is the only message a 500 carries: the real error may
	// hold credentials (a clone URL), so it goes to the log alone.
	MsgInternal                 = "internal server error"
	MsgAPIDisabled              = "API is disabled"
	MsgBadToken                 = "invalid or missing API token"
	MsgDetectionDisabled        = "drift detection is not enabled"
	MsgRemediationDisabled      = "drift remediation is not enabled"
	MsgRemediationApplyDisabled = "drift remediation apply is not enabled"
	MsgMissingParameter         = "missing required parameter"
	MsgInvalidType              = "invalid VCS type"
	MsgUnsupportedType          = "unsupported VCS type"
	MsgInvalidRepository        = "invalid repository"
	MsgInvalidPathFilter        = "invalid path filter"
	MsgInvalidLimit             = "invalid limit parameter"
	MsgValidationFailed         = "validation failed"
	MsgNotAllowlisted           = "repository is not in the allowlist"
	MsgRemediationFailed        = "drift remediation failed"
	MsgResultNotFound           = "remediation result not found"
	MsgReadBody                 = "failed to read request body"
)

// StatusOf is the HTTP status sent with error code code. An unknown code
// is a bug on our side, hence 500.
func StatusOf(code string) int {
	switch code {
	case CodeValidation:
		return http.StatusBadRequest
	case CodeUnauthorized:
		return http.StatusUnauthorized
	case CodeForbidden:
		return http.StatusForbidden
	case CodeNotFound:
		return http.StatusNotFound
	case CodeConflict:
		return http.StatusConflict
	case CodeRateLimited:
		return http.StatusTooManyRequests
	case CodeServiceUnavailable:
		return http.StatusServiceUnavailable
	}
	return http.StatusInternalServerError
}

// OK is the envelope of a successful response carrying data.
func OK(data any, requestID string, now time.Time) Envelope {
	return Envelope{Success: true, Data: data, RequestID: requestID, Timestamp: now}
}

// Fail is the envelope of a failed response. Empty field-error details
// are dropped, so "details" is absent rather than [].
func Fail(code, message string, details any, requestID string, now time.Time) Envelope {
	if fe, ok := details.([]FieldError); ok && len(fe) == 0 {
		details = nil
	}
	return Envelope{
		Error:     &EnvelopeError{Code: code, Message: message, Details: details},
		RequestID: requestID,
		Timestamp: now,
	}
}

// Invalid is a 400 validation error: message, and details naming field.
func Invalid(message, field, detail string) *EnvelopeError {
	return &EnvelopeError{Code: CodeValidation, Message: message, Details: []FieldError{{field, detail}}}
}

// CheckScope applies the checks that the read routes (status, history,
// result by id) make of their repository and type query parameters, in
// the API's order, and returns the first failure or nil. The allowlist
// and the VCS's own parsing come after it and are the caller's.
func CheckScope(repository, vcsType string) *EnvelopeError {
	switch {
	case repository == "":
		return Invalid(MsgMissingParameter, fieldRepository, "repository parameter is required")
	case vcsType == "":
		return Invalid(MsgMissingParameter, fieldType, "type parameter is required")
	case !ValidType(vcsType):
		return Invalid(MsgInvalidType, fieldType, `"`+vcsType+`" is not a valid type`)
	case !SupportedType(vcsType):
		return Invalid(MsgUnsupportedType, fieldType, MsgTypeUnsupported)
	case !ValidRepository(vcsType, repository):
		return Invalid(MsgInvalidRepository, fieldRepository, MsgRepositoryShape)
	}
	return nil
}

// CheckPathFilter returns the status route's path filter cleaned, or the
// error to send. An empty filter means no filter and is returned as is.
func CheckPathFilter(p string) (string, *EnvelopeError) {
	if p == "" {
		return "", nil
	}
	c, ok := CleanPath(p)
	if !ok {
		return "", Invalid(MsgInvalidPathFilter, "path", "path must be a clean repo-relative path")
	}
	return c, nil
}

// The history route's page size: its default, and the cap above which a
// larger limit is quietly lowered rather than refused.
const (
	DefaultLimit = 10
	MaxLimit     = 100
)

// ParseLimit reads the history route's limit parameter. present says
// whether the key was in the query at all: an empty value is refused,
// unlike a missing key, which gives DefaultLimit.
func ParseLimit(raw string, present bool) (int, *EnvelopeError) {
	if !present {
		return DefaultLimit, nil
	}
	n, err := strconv.Atoi(strings.TrimSpace(raw))
	if err != nil || n <= 0 {
		return 0, Invalid(MsgInvalidLimit, "limit", "must be a positive integer")
	}
	return min(n, MaxLimit), nil
}

// ResultNotFound is the 404 for an unknown remediation id. The message
// repeats its prefix, as Atlantis's does, so clients matching it agree.
func ResultNotFound(id string) *EnvelopeError {
	return &EnvelopeError{Code: CodeNotFound, Message: MsgResultNotFound + ": " + MsgResultNotFound + ": " + id}
}
