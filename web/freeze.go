package web

import (
	"net/http"

	"github.com/atollhq/atoll"
	"github.com/atollhq/atoll/templates"
)

// handleFreezeForm turns the apply freeze on or off from the dashboard
// (form: on=1|0, reason, back).
func (s *Server) handleFreezeForm(w http.ResponseWriter, r *http.Request) {
	if err := readForm(w, r, maxForm); err != nil {
		s.failed(w, r, "/audit", err)
		return
	}
	back := r.PostFormValue("back")
	if back == "" {
		back = "/audit"
	}
	back = safeBack(back)
	var on bool
	switch r.PostFormValue("on") {
	case "1", "true", "on":
		on = true
	case "0", "false", "off":
	default:
		s.failed(w, r, back, atoll.Errorf(atoll.EINVALID, "Say on=1 to freeze applies or on=0 to allow them."))
		return
	}
	f, err := s.setFreeze(r, on, r.PostFormValue("reason"))
	if err != nil {
		s.failed(w, r, back, err)
		return
	}
	if isHTMX(r) {
		// Every part of the page shows the freeze (the banner above all).
		w.Header().Set("HX-Refresh", "true")
	}
	s.done(w, r, back, freezeMessage(f), nil, f)
}

func freezeMessage(f atoll.Freeze) string {
	if f.On {
		return "Applies are frozen. Plans still run."
	}
	return "Applies are allowed again."
}

func (s *Server) setFreeze(r *http.Request, on bool, reason string) (atoll.Freeze, error) {
	u := atoll.UserFromContext(r.Context())
	if u == nil {
		return atoll.Freeze{}, atoll.Errorf(atoll.EUNAUTHORIZED, "Sign in first.")
	}
	return s.DB.SetFreeze(r.Context(), on, u.Name, reason, source(r))
}

// handleAPIFreeze returns the apply freeze.
func (s *Server) handleAPIFreeze(w http.ResponseWriter, r *http.Request) {
	f, err := s.DB.Freeze(r.Context())
	if err != nil {
		s.error(w, r, err)
		return
	}
	writeJSON(w, http.StatusOK, f)
}

type freezeRequest struct {
	On     *bool  `json:"on"`
	Reason string `json:"reason"`
}

// handleAPISetFreeze sets the apply freeze: {"on":true,"reason":"..."}.
func (s *Server) handleAPISetFreeze(w http.ResponseWriter, r *http.Request) {
	var in freezeRequest
	const like = `{"on":true,"reason":"release week"}`
	if err := readJSON(w, r, &in, jsonBody{Limit: 64 << 10, Like: like}); err != nil {
		s.error(w, r, err)
		return
	}
	if in.On == nil {
		s.error(w, r, atoll.Errorf(atoll.EINVALID, "The field on is required: send JSON like %s.", like))
		return
	}
	f, err := s.setFreeze(r, *in.On, in.Reason)
	if err != nil {
		s.error(w, r, err)
		return
	}
	writeJSON(w, http.StatusOK, f)
}

// handleFreezeBanner is the layout's freeze banner alone, which every page
// re-fetches when the freeze changes.
func (s *Server) handleFreezeBanner(w http.ResponseWriter, r *http.Request) {
	s.renderPage(w, r, http.StatusOK, templates.FreezeBanner(s.pageMeta(r.Context()).Freeze))
}
