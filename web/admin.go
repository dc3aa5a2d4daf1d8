package web

import (
	"net/http"
	"strconv"
	"strings"
	"unicode/utf8"

	"golang.org/x/crypto/bcrypt"

	"github.com/atollhq/atoll"
	"github.com/atollhq/atoll/templates"
)

// adminRoutes registers the admin page: users, API tokens and worker
// tokens (admins only).
// Every change is an audit event by the signed-in admin.
func (s *Server) adminRoutes(mux *routeMux) {
	admin := func(h http.HandlerFunc) http.HandlerFunc { return s.require(atoll.RoleAdmin, h) }
	// The changes are form posts: their form is read (readForm) before h.
	change := func(h http.HandlerFunc) http.HandlerFunc {
		return admin(func(w http.ResponseWriter, r *http.Request) {
			if err := readForm(w, r, maxForm); err != nil {
				s.failed(w, r, "/admin", err)
				return
			}
			h(w, r)
		})
	}
	mux.HandleFunc("GET /admin", admin(s.handleAdminPage))
	mux.HandleFunc("POST /admin/users", change(s.handleCreateUser))
	mux.HandleFunc("POST /admin/users/{id}/role", change(s.handleSetUserRole))
	mux.HandleFunc("POST /admin/users/{id}/disable", change(s.handleDisableUser))
	mux.HandleFunc("POST /admin/users/{id}/vcs-logins", change(s.handleSetUserVCSLogins))
	mux.HandleFunc("POST /admin/users/{id}/delete", change(s.handleDeleteUser))
	mux.HandleFunc("POST /admin/tokens", change(s.handleCreateToken))
	mux.HandleFunc("POST /admin/tokens/{id}/revoke", change(s.handleRevokeToken))
	mux.HandleFunc("POST /admin/worker-tokens", change(s.handleCreateWorkerToken))
	mux.HandleFunc("POST /admin/worker-tokens/{id}/revoke", change(s.handleRevokeWorkerToken))
}

// handleAdminPage lists users and API tokens.
func (s *Server) handleAdminPage(w http.ResponseWriter, r *http.Request) {
	s.renderAdmin(w, r, http.StatusOK, templates.AdminPage{})
}

func (s *Server) renderAdmin(w http.ResponseWriter, r *http.Request, status int, page templates.AdminPage) {
	var err error
	page.Meta = s.pageMeta(r.Context())
	if page.Users, err = s.DB.Users(r.Context()); err == nil {
		page.Tokens, err = s.DB.Tokens(r.Context())
	}
	if err == nil && s.WorkerAdmin != nil {
		// The worker pools' failure (this node cannot read them now) only
		// leaves their tokens out: users and API tokens are still managed.
		page.WorkerPools = true
		if o, werr := s.WorkerAdmin.Workers(r.Context()); werr == nil {
			page.WorkerTokens = o.Tokens
		} else {
			s.errorStatus(r, werr) // logs internal errors
			page.WorkerTokensError = atoll.ErrorMessage(werr)
		}
	}
	if err != nil {
		s.pageError(w, r, err)
		return
	}
	s.renderPage(w, r, status, templates.Admin(page))
}

// adminChanged answers an admin's change to users: the store made it, with
// its audit event and the rule that an enabled admin remains.
func (s *Server) adminChanged(w http.ResponseWriter, r *http.Request, msg string, err error) {
	if err != nil {
		s.failed(w, r, "/admin", err)
		return
	}
	s.done(w, r, "/admin", msg, nil, map[string]string{"message": msg})
}

func formUserID(r *http.Request) (int64, error) { return atoll.ParseID(r.PathValue("id")) }

// validPassword bounds passwords: bcrypt reads at most 72 bytes.
func validPassword(p string) error {
	if len(p) < 8 || len(p) > 72 {
		return atoll.Errorf(atoll.EINVALID, "A password is 8 to 72 bytes long.")
	}
	return nil
}

// handleCreateUser creates a local account. The store checks and folds
// its name (atoll.UserName): "Alice" is created as alice.
func (s *Server) handleCreateUser(w http.ResponseWriter, r *http.Request) {
	name, role, password := strings.TrimSpace(r.PostFormValue("name")), atoll.Role(r.PostFormValue("role")), r.PostFormValue("password")
	err := validPassword(password)
	if err == nil && !role.Valid() {
		err = atoll.Errorf(atoll.EINVALID, "Choose a role: viewer, operator or admin.")
	}
	if err != nil {
		s.failed(w, r, "/admin", err)
		return
	}
	hash, err := bcrypt.GenerateFromPassword([]byte(password), bcrypt.DefaultCost)
	if err != nil {
		s.failed(w, r, "/admin", err)
		return
	}
	u, err := s.DB.CreateUser(r.Context(), atoll.NewUser{Name: name, Role: role, Source: atoll.UserSourceLocal, PasswordHash: string(hash)},
		atoll.UserFromContext(r.Context()).Name, source(r))
	if err == nil {
		name = u.Name
	}
	s.adminChanged(w, r, "Created "+name+" ("+string(role)+").", err)
}

// handleSetUserRole changes a user's role.
func (s *Server) handleSetUserRole(w http.ResponseWriter, r *http.Request) {
	id, err := formUserID(r)
	role := atoll.Role(r.PostFormValue("role"))
	if err == nil && !role.Valid() {
		err = atoll.Errorf(atoll.EINVALID, "Choose a role: viewer, operator or admin.")
	}
	if err != nil {
		s.failed(w, r, "/admin", err)
		return
	}
	a, err := s.DB.UserByID(r.Context(), id)
	if err != nil {
		s.failed(w, r, "/admin", err)
		return
	}
	err = s.DB.SetUserRole(r.Context(), id, role, atoll.UserFromContext(r.Context()).Name, source(r))
	s.adminChanged(w, r, a.Name+" is now "+string(role)+".", err)
}

// handleDisableUser disables (disabled=true) or enables a user.
func (s *Server) handleDisableUser(w http.ResponseWriter, r *http.Request) {
	id, a, err := s.formUser(r)
	if err != nil {
		s.failed(w, r, "/admin", err)
		return
	}
	disable := r.PostFormValue("disabled") != "false"
	msg := "Disabled " + a.Name + ": signed out everywhere, API tokens revoked."
	if !disable {
		msg = "Enabled " + a.Name + "."
	}
	err = s.DB.SetUserDisabled(r.Context(), id, disable, atoll.UserFromContext(r.Context()).Name, source(r))
	s.adminChanged(w, r, msg, err)
}

// handleSetUserVCSLogins replaces a user's VCS logins (vcs_logins, comma-
// or space-separated; empty clears them).
func (s *Server) handleSetUserVCSLogins(w http.ResponseWriter, r *http.Request) {
	id, a, err := s.formUser(r)
	var logins []string
	if err == nil {
		logins, err = atoll.ParseVCSLogins(r.PostFormValue("vcs_logins"))
	}
	if err != nil {
		s.failed(w, r, "/admin", err)
		return
	}
	err = s.DB.SetUserVCSLogins(r.Context(), id, logins, atoll.UserFromContext(r.Context()).Name, source(r))
	msg := a.Name + " has no VCS logins now."
	if len(logins) > 0 {
		msg = "VCS logins of " + a.Name + ": " + strings.Join(logins, ", ") + "."
	}
	s.adminChanged(w, r, msg, err)
}

// handleDeleteUser deletes a user with its sessions and API tokens.
func (s *Server) handleDeleteUser(w http.ResponseWriter, r *http.Request) {
	id, a, err := s.formUser(r)
	if err != nil {
		s.failed(w, r, "/admin", err)
		return
	}
	err = s.DB.DeleteUser(r.Context(), id, atoll.UserFromContext(r.Context()).Name, source(r))
	s.adminChanged(w, r, "Deleted "+a.Name+".", err)
}

// handleCreateToken creates an API token for a user and shows it once, on
// the page it answers with (never in a redirect, cookie or log).
func (s *Server) handleCreateToken(w http.ResponseWriter, r *http.Request) {
	me := atoll.UserFromContext(r.Context())
	name := strings.TrimSpace(r.PostFormValue("name"))
	if name == "" || utf8.RuneCountInString(name) > 100 {
		s.failed(w, r, "/admin", atoll.Errorf(atoll.EINVALID, "Name the token (1 to 100 characters), e.g. after the script that uses it."))
		return
	}
	a, err := s.DB.UserByName(r.Context(), strings.TrimSpace(r.PostFormValue("user")))
	if err != nil {
		s.failed(w, r, "/admin", err)
		return
	}
	secret, hash := atoll.NewSecret()
	if err := s.DB.CreateToken(r.Context(), a.ID, name, hash, me.Name, source(r)); err != nil {
		s.failed(w, r, "/admin", err)
		return
	}
	if !wantsHTML(r) {
		writeJSON(w, http.StatusCreated, map[string]string{"token": secret, "user": a.Name, "name": name})
		return
	}
	s.renderAdmin(w, r, http.StatusCreated, templates.AdminPage{NewToken: secret, NewTokenName: name, NewTokenUser: a.Name})
}

// handleRevokeToken deletes an API token: it stops working at once.
func (s *Server) handleRevokeToken(w http.ResponseWriter, r *http.Request) {
	id, err := strconv.ParseInt(r.PathValue("id"), 10, 64)
	if err != nil {
		s.failed(w, r, "/admin", atoll.Errorf(atoll.EINVALID, "Invalid token id."))
		return
	}
	me := atoll.UserFromContext(r.Context())
	t, err := s.DB.RevokeToken(r.Context(), id, me.Name, source(r))
	if err != nil {
		s.failed(w, r, "/admin", err)
		return
	}
	msg := "Revoked the token " + t.Name + " of " + t.User + "."
	s.done(w, r, "/admin", msg, nil, map[string]string{"message": msg})
}

// formUser is the user the admin form's path names.
func (s *Server) formUser(r *http.Request) (int64, *atoll.Account, error) {
	id, err := formUserID(r)
	if err != nil {
		return 0, nil, err
	}
	a, err := s.DB.UserByID(r.Context(), id)
	return id, a, err
}
