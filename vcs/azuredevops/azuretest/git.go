package azuretest

import (
	"net/http"
	"net/http/cgi"
	"os/exec"
	"strings"
)

// ServeGit serves the git repository in dir (a work tree or a bare
// repository) over git's smart HTTP protocol at the path Azure Repos uses,
// ORG/PROJECT/_git/REPO, with the real git http-backend. Fetches
// authenticate like API calls: Basic auth whose password is an accepted PAT
// or Entra ID token (any user name), as Azure Repos takes them.
func (s *Server) ServeGit(org, project, repo, dir string) {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.gitDirs == nil {
		s.gitDirs = map[string]string{}
	}
	s.gitDirs[repoKey(org, project, repo)] = dir
}

// Fetches counts the git fetches (upload-pack requests) served for a repository.
func (s *Server) Fetches(org, project, repo string) int {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.fetches[repoKey(org, project, repo)]
}

// serveGit answers a request under ORG/PROJECT/_git/REPO when a
// repository is served there, and reports whether it did.
func (s *Server) serveGit(w http.ResponseWriter, r *http.Request, path string) bool {
	seg := strings.SplitN(strings.Trim(path, "/"), "/", 5)
	if len(seg) < 4 || seg[2] != "_git" {
		return false
	}
	key := repoKey(seg[0], seg[1], seg[3])
	s.mu.Lock()
	dir, ok := s.gitDirs[key]
	auth := r.Header.Get("Authorization")
	s.calls = append(s.calls, Call{Method: r.Method, Path: r.URL.Path, Query: r.URL.RawQuery, Accept: r.Header.Get("Accept"), Auth: auth})
	who := s.identity(auth)
	if ok && who != "" && strings.HasSuffix(r.URL.Path, "/git-upload-pack") {
		if s.fetches == nil {
			s.fetches = map[string]int{}
		}
		s.fetches[key]++
	}
	s.mu.Unlock()
	if !ok {
		return false
	}
	if who == "" {
		w.Header().Set("WWW-Authenticate", `Basic realm="`+s.srv.URL+`/"`)
		http.Error(w, "TF400813: The user is not authorized to access this resource.", http.StatusUnauthorized)
		return true
	}
	gitPath, err := exec.LookPath("git")
	if err != nil {
		http.Error(w, err.Error(), http.StatusInternalServerError)
		return true
	}
	// http-backend finds the repository at GIT_PROJECT_ROOT + PATH_INFO;
	// PATH_INFO is what follows Root, so the repository is dir itself.
	root := strings.TrimSuffix(r.URL.Path, "/"+seg[4])
	if len(seg) < 5 {
		root = r.URL.Path
	}
	(&cgi.Handler{Path: gitPath, Args: []string{"http-backend"}, Root: root,
		Env: []string{"GIT_PROJECT_ROOT=" + dir, "GIT_HTTP_EXPORT_ALL=1"}}).ServeHTTP(w, r)
	return true
}
