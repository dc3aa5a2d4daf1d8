package web

import (
	"encoding/json"
	"errors"
	"io"
	"maps"
	"net/http"
	"slices"
	"strings"

	"github.com/atollhq/atoll"
)

// Request bodies are read by the two helpers here, and only by them: every
// JSON handler decodes with readJSON, every form handler parses with
// readForm, so that each rule (one value, no duplicates, the size limit and
// how it is reported) holds everywhere at once.

// jsonBody is what a handler takes as its JSON request body.
type jsonBody struct {
	// Limit bounds the body, in bytes.
	Limit int64
	// Like is a body that would do, shown when one does not.
	Like string
	// AllowUnknown ignores fields the handler does not read (Atlantis's
	// API, whose clients may send more); the others refuse them.
	AllowUnknown bool
}

// readJSON decodes r's body into v: exactly one JSON value, nothing after
// it but white space. A body that is not is EINVALID saying why and showing
// b.Like; one over b.Limit is ETOOLARGE.
func readJSON(w http.ResponseWriter, r *http.Request, v any, b jsonBody) error {
	dec := json.NewDecoder(http.MaxBytesReader(w, r.Body, b.Limit))
	if !b.AllowUnknown {
		dec.DisallowUnknownFields()
	}
	err := dec.Decode(v)
	if err == nil {
		// A second value, or anything else, after the first.
		if _, terr := dec.Token(); !errors.Is(terr, io.EOF) {
			err = errTrailingData
			var tooLarge *http.MaxBytesError
			if errors.As(terr, &tooLarge) {
				err = terr
			}
		}
	}
	if err == nil {
		return nil
	}
	if tooLarge := bodyTooLarge(err); tooLarge != nil {
		return tooLarge
	}
	return atoll.Errorf(atoll.EINVALID, "%s Body must be JSON like %s.", jsonProblem(err), b.Like)
}

var errTrailingData = errors.New("trailing data")

// jsonProblem says what is wrong with a JSON body, without the decoder's Go
// type names.
func jsonProblem(err error) string {
	var syntax *json.SyntaxError
	var typ *json.UnmarshalTypeError
	switch {
	case errors.Is(err, errTrailingData):
		return "The body has more after its JSON value: send one value only."
	case errors.Is(err, io.EOF):
		return "The body is empty."
	case errors.Is(err, io.ErrUnexpectedEOF):
		return "The body's JSON ends too early."
	case errors.As(err, &syntax):
		return "The body is not valid JSON."
	case errors.As(err, &typ) && typ.Field != "":
		return "The field " + typ.Field + " cannot be a JSON " + typ.Value + "."
	case errors.As(err, &typ):
		return "The body cannot be a JSON " + typ.Value + "."
	case strings.HasPrefix(err.Error(), "json: unknown field "):
		return "Unknown field " + strings.TrimPrefix(err.Error(), "json: unknown field ") + "."
	}
	return "The body is not valid JSON."
}

// bodyTooLarge is ETOOLARGE naming the limit when err is a body read past
// http.MaxBytesReader's limit, else nil.
func bodyTooLarge(err error) error {
	var tooLarge *http.MaxBytesError
	if !errors.As(err, &tooLarge) {
		return nil
	}
	return atoll.Errorf(atoll.ETOOLARGE, "Request body too large (limit %d KiB).", tooLarge.Limit>>10)
}

// readForm parses r's form body, at most limit bytes, into r.PostForm (and
// r.Form). A field given more than once is refused (EINVALID, naming it)
// unless listed in multi: a form that repeats one would otherwise have one
// of its values picked silently. A body over limit is ETOOLARGE.
func readForm(w http.ResponseWriter, r *http.Request, limit int64, multi ...string) error {
	r.Body = http.MaxBytesReader(w, r.Body, limit)
	if err := r.ParseForm(); err != nil {
		if tooLarge := bodyTooLarge(err); tooLarge != nil {
			return tooLarge
		}
		return atoll.Errorf(atoll.EINVALID, "The form could not be read.")
	}
	for _, k := range slices.Sorted(maps.Keys(r.PostForm)) {
		if len(r.PostForm[k]) > 1 && !slices.Contains(multi, k) {
			return atoll.Errorf(atoll.EINVALID, "The form field %q is given %d times: give it once.", k, len(r.PostForm[k]))
		}
	}
	return nil
}
