package web

import (
	"bytes"
	"context"
	"fmt"
	"io/fs"
	"net/http"
	"strings"

	"github.com/a-h/templ"

	"github.com/atollhq/atoll"
	"github.com/atollhq/atoll/assets"
	"github.com/atollhq/atoll/templates"
)

// pageRoutes registers the static files and the not-found page; each page
// registers its own route next to its handler.
func (s *Server) pageRoutes(mux *routeMux) {
	mux.HandleFunc("GET /favicon.ico", func(w http.ResponseWriter, r *http.Request) { w.WriteHeader(http.StatusNoContent) })
	mux.HandleFunc("GET /assets/", s.handleAsset)
	mux.HandleFunc("GET /", s.handleNotFoundPage)
}

// handleNotFoundPage answers every GET no other route matches: an HTML page,
// or a JSON error under /api/.
func (s *Server) handleNotFoundPage(w http.ResponseWriter, r *http.Request) {
	if strings.HasPrefix(r.URL.Path, "/api/") {
		s.error(w, r, atoll.Errorf(atoll.ENOTFOUND, "No such API endpoint."))
		return
	}
	s.pageError(w, r, atoll.Errorf(atoll.ENOTFOUND, "There is no page at this address."))
}

var assetServer = http.StripPrefix("/assets", http.FileServerFS(assets.FS))

// handleAsset serves the embedded static files. URLs carrying the current
// ?v= version (as the pages write them) are cached for a year; others for
// five minutes, revalidated by ETag.
func (s *Server) handleAsset(w http.ResponseWriter, r *http.Request) {
	name := strings.TrimPrefix(r.URL.Path, "/assets/")
	if fi, err := fs.Stat(assets.FS, name); name == "" || err != nil || fi.IsDir() {
		s.pageError(w, r, atoll.Errorf(atoll.ENOTFOUND, "No such file."))
		return
	}
	h := w.Header()
	h.Set("ETag", `"`+assets.Version+`"`)
	h.Set("X-Content-Type-Options", "nosniff")
	if r.URL.Query().Get("v") == assets.Version {
		h.Set("Cache-Control", "public, max-age=31536000, immutable")
	} else {
		h.Set("Cache-Control", "public, max-age=300")
	}
	assetServer.ServeHTTP(w, r)
}

// pageMeta is what every page's header shows.
func (s *Server) pageMeta(ctx context.Context) templates.Meta {
	m := templates.Meta{Version: s.Version, Node: s.Node, Demo: s.Demo, Now: s.now(), AssetVersion: assets.Version, User: atoll.UserFromContext(ctx)}
	m.Flash, m.FlashOK = flashOf(ctx)
	m.WorkerPools = s.WorkerAdmin != nil
	m.Drift = s.Drift != nil
	if s.DB != nil && s.DB.Readable() {
		// One primary-key read; a failure only hides the banner.
		if f, err := s.DB.Freeze(ctx); err == nil {
			m.Freeze = f
		} else {
			s.Logger.Warn("read apply freeze", "err", err)
		}
	}
	if s.Cluster != nil {
		if st := s.Cluster.Status(ctx); st.Role != atoll.RoleActive {
			lag := int64(0)
			if r := s.Cluster.Replication(ctx); r != nil {
				lag = r.LagMS
			}
			m.Standby = fmt.Sprintf("Standby: this page is read from this node's copy, %d ms behind the active node %s. Actions are sent to the active node.", lag, st.ActiveNode)
		}
	}
	return m
}

// pageError shows err as an HTML page with the status for its code; like
// s.error, internal errors are logged and shown as a generic message.
func (s *Server) pageError(w http.ResponseWriter, r *http.Request, err error) {
	status := s.errorStatus(r, err)
	page := templates.ErrorPage{Meta: s.pageMeta(r.Context()), Status: status, Message: atoll.ErrorMessage(err)}
	s.renderPage(w, r, status, templates.Error(page))
}

// renderPage renders c fully before answering, so that a failure shows an
// error page rather than half a page.
func (s *Server) renderPage(w http.ResponseWriter, r *http.Request, status int, c templ.Component) {
	var buf bytes.Buffer
	if err := c.Render(r.Context(), &buf); err != nil {
		if r.Context().Err() != nil {
			return // the client went away
		}
		s.Logger.Error("page render", "path", r.URL.Path, "err", err)
		pageHeaders(w)
		w.Header().Set("Content-Type", "text/plain; charset=utf-8")
		w.WriteHeader(http.StatusInternalServerError)
		w.Write([]byte("Internal error.\n"))
		return
	}
	pageHeaders(w)
	w.WriteHeader(status)
	w.Write(buf.Bytes())
}

// pageHeaders marks a response as an uncached HTML page (securityHeaders
// adds the CSP and the rest to every response).
func pageHeaders(w http.ResponseWriter) {
	h := w.Header()
	h.Set("Content-Type", "text/html; charset=utf-8")
	h.Set("Cache-Control", "no-store")
}
