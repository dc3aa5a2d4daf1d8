package web

import (
	"context"
	"net/http"
	"time"

	"github.com/atollhq/atoll"
)

// apiCommandRequest is the body of Atlantis's /api/plan and /api/apply.
type apiCommandRequest struct {
	Repository string
	Ref        string
	Type       string
	PR         int
	Projects   []string
	Paths      []struct {
		Directory string
		Workspace string
	}
}

type apiCommandResponse struct {
	Requests []*atoll.Request `json:"requests"`
	Jobs     []*atoll.Job     `json:"jobs"`
	// Failed is true when a request failed or a job did not succeed.
	Failed bool `json:"failed"`
	// Message says why nothing ran when no job did.
	Message string `json:"message,omitempty"`
}

// apiWait bounds how long the API waits for the work it queued.
const apiWait = 30 * time.Minute

// handleAPIPlan and handleAPIApply run "atlantis plan|apply" for the
// projects or paths named, as if commented on the pull request, wait for
// the result and return the requests and their jobs. The pull request's
// conversation gets the usual comments.
func (s *Server) handleAPIPlan(w http.ResponseWriter, r *http.Request)  { s.apiCommand(w, r, "plan") }
func (s *Server) handleAPIApply(w http.ResponseWriter, r *http.Request) { s.apiCommand(w, r, "apply") }

func (s *Server) apiCommand(w http.ResponseWriter, r *http.Request, name string) {
	ctx := r.Context()
	var in apiCommandRequest
	if err := readJSON(w, r, &in, jsonBody{Limit: 1 << 20, AllowUnknown: true,
		Like: `{"Repository":"owner/name","PR":1,"Paths":[{"Directory":"dir","Workspace":"default"}]}`}); err != nil {
		s.error(w, r, err)
		return
	}
	if in.PR <= 0 {
		s.error(w, r, atoll.Errorf(atoll.EINVALID, "PR is required: Atoll plans and applies pull requests."))
		return
	}
	pull, err := s.DB.PullByNumber(ctx, in.Repository, in.PR)
	if err != nil {
		s.error(w, r, err)
		return
	}
	repo, err := s.DB.Repo(ctx, pull.RepoID)
	if err != nil {
		s.error(w, r, err)
		return
	}
	if s.Commands == nil {
		s.error(w, r, atoll.Errorf(atoll.EUNAVAILABLE, "This server runs no commands."))
		return
	}
	cmds, err := apiCommands(name, in)
	if err != nil {
		s.error(w, r, err)
		return
	}
	// Each selection is one command; the command service holds it to the
	// comment grammar's rules (paths, workspaces, names) exactly as on the
	// pull request. All are checked before any is queued.
	for _, c := range cmds {
		if err := s.Commands.Check(c); err != nil {
			s.error(w, r, err)
			return
		}
	}
	var out apiCommandResponse
	if name == "apply" {
		// The runner refuses too (in a comment); the caller hears it here.
		if f, err := s.DB.Freeze(ctx); err != nil {
			s.error(w, r, err)
			return
		} else if err := f.Refusal(); err != nil {
			s.error(w, r, err)
			return
		}
	}
	// The call waits for Terraform: past the server's read and write
	// timeouts, which would cancel it.
	liftDeadlines(w, time.Now().Add(apiWait+time.Minute))
	for _, c := range cmds {
		done, err := s.Commands.Submit(ctx, atoll.CommandSubmission{Repo: *repo, Pull: *pull, Command: c,
			User: actor(r), Via: atoll.ViaAPI, Source: source(r)})
		if err != nil {
			s.error(w, r, err)
			return
		}
		out.Requests = append(out.Requests, &atoll.Request{ID: done.RequestID})
	}
	wctx, cancel := context.WithTimeout(ctx, apiWait)
	defer cancel()
	for i, q := range out.Requests {
		done, err := s.waitRequest(wctx, q.ID)
		if err != nil {
			s.error(w, r, atoll.Errorf(atoll.EUNAVAILABLE, "Gave up waiting for request %d: %v", q.ID, err))
			return
		}
		out.Requests[i] = done
		jobs, err := s.DB.RequestJobs(ctx, q.ID)
		if err != nil {
			s.error(w, r, err)
			return
		}
		for _, j := range jobs {
			out.Failed = out.Failed || j.State != atoll.JobSucceeded
		}
		out.Failed = out.Failed || done.Error != ""
		out.Jobs = append(out.Jobs, jobs...)
	}
	out.Jobs = nonNil(out.Jobs)
	if len(out.Jobs) == 0 && !out.Failed {
		out.Message = nothingRan[name]
	}
	writeJSON(w, http.StatusOK, out)
}

// nothingRan explains an empty result, as the pull request's comment does:
// like Atlantis's "Ran Apply for 0 projects", it is a 200, not an error.
var nothingRan = map[string]string{
	"plan":  "Nothing to plan: no Terraform project of the pull request matches.",
	"apply": "Nothing to apply: the pull request has no unapplied plans for this selection. Plan first.",
}

// apiCommands are the commands the request selects: one per project and
// per path, or one on every project when it names none. Empty names and
// directories are refused here, as the comment they used to be written as
// (-p with an empty value) was: left out, they would select every project.
func apiCommands(name string, in apiCommandRequest) ([]atoll.Command, error) {
	var cmds []atoll.Command
	for _, p := range in.Projects {
		if p == "" {
			return nil, atoll.Errorf(atoll.EINVALID, "Projects: a project name must not be empty.")
		}
		cmds = append(cmds, atoll.Command{Name: name, Project: p})
	}
	for _, p := range in.Paths {
		if p.Directory == "" {
			return nil, atoll.Errorf(atoll.EINVALID, "Paths: Directory must not be empty (\".\" is the repository's root).")
		}
		cmds = append(cmds, atoll.Command{Name: name, Dir: p.Directory, Workspace: p.Workspace})
	}
	if len(cmds) == 0 {
		cmds = []atoll.Command{{Name: name}}
	}
	return cmds, nil
}

func (s *Server) waitRequest(ctx context.Context, id int64) (*atoll.Request, error) {
	for {
		q, err := s.DB.Request(ctx, id)
		if err != nil {
			return nil, err
		}
		if q.State == atoll.RequestDone || q.State == atoll.RequestInterrupted {
			return q, nil
		}
		select {
		case <-time.After(100 * time.Millisecond):
		case <-ctx.Done():
			return nil, ctx.Err()
		}
	}
}
