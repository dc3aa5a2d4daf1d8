package atoll

import (
	"errors"
	"fmt"
)

// Error codes. The web layer maps each to an HTTP status; messages of coded
// errors are safe to show to users, anything else is reported as internal.
const (
	ECONFLICT       = "conflict"
	EINTERNAL       = "internal"
	EINVALID        = "invalid"
	ENOTFOUND       = "not_found"
	EUNAUTHORIZED   = "unauthorized"
	EFORBIDDEN      = "forbidden"
	EUNAVAILABLE    = "unavailable"
	ENOTIMPLEMENTED = "not_implemented"
	ETOOMANY        = "too_many_requests"
	ETOOLARGE       = "too_large"
)

// Error is an application error whose Message can be shown to a user.
type Error struct {
	Code    string
	Message string
}

func (e *Error) Error() string {
	return fmt.Sprintf("atoll error: code=%s message=%s", e.Code, e.Message)
}

// Errorf returns a coded error with a formatted, user-safe message.
func Errorf(code, format string, args ...any) *Error {
	return &Error{Code: code, Message: fmt.Sprintf(format, args...)}
}

// ErrorCode returns the code of the first *Error in err's chain, EINTERNAL for
// other errors and "" for nil.
func ErrorCode(err error) string {
	var e *Error
	if err == nil {
		return ""
	} else if errors.As(err, &e) {
		return e.Code
	}
	return EINTERNAL
}

// ErrorMessage returns the user-safe message of err; internal errors get a
// generic message so that no detail (paths, SQL, secrets) leaks out.
func ErrorMessage(err error) string {
	var e *Error
	if err == nil {
		return ""
	} else if errors.As(err, &e) {
		return e.Message
	}
	return "Internal error."
}
