package web

import (
	"mime"
	"net/http"
	"strconv"

	"github.com/atollhq/atoll"
	"github.com/atollhq/atoll/templates"
)

// pullCommandRequest is what the Plan and Apply buttons send, as a form or
// JSON: the command and at most one project, by name or by dir and
// workspace. None of it is copied into the comment: it only selects one of
// the pull request's projects, whose stored name or dir and workspace are.
type pullCommandRequest struct {
	Command   string `json:"command"`
	Project   string `json:"project"`
	Dir       string `json:"dir"`
	Workspace string `json:"workspace"`
}

// pullCommandResult is the JSON answer.
type pullCommandResult struct {
	RequestID int64  `json:"request_id"`
	Comment   string `json:"comment"`
	Project   string `json:"project,omitempty"`
	// Follow is the pull request page showing the request's outcome.
	Follow string `json:"follow"`
}

// handlePullCommand runs Plan or Apply from the pull request page: it
// submits the command (on the project selected by its stored name, or dir
// and workspace; or on all) as the signed-in user. The command service
// writes it as the comment a user would write ("atlantis plan -p NAME")
// and queues it exactly as that comment, so that requirements, locks and
// replies are the same; on a local repository the comment is also added to
// the conversation, by that user.
func (s *Server) handlePullCommand(w http.ResponseWriter, r *http.Request) {
	ctx := r.Context()
	user := atoll.UserFromContext(ctx) // s.require put one there
	pull, err := s.pullOf(ctx, r)
	if err != nil {
		s.failed(w, r, "/", err)
		return
	}
	back := paths.Pull(pull.Repo, pull.Number)
	if s.Commands == nil {
		s.failed(w, r, back, atoll.Errorf(atoll.EUNAVAILABLE, "This server runs no commands."))
		return
	}
	if !pullOpen(pull) {
		s.failed(w, r, back, atoll.Errorf(atoll.ECONFLICT, "This pull request is %s: nothing can be planned or applied.", pull.State))
		return
	}
	in, err := readPullCommand(w, r)
	if err != nil {
		s.failed(w, r, back, err)
		return
	}
	projects, err := s.DB.PullProjects(ctx, pull.ID)
	if err != nil {
		s.failed(w, r, back, err)
		return
	}
	sel, err := selectProject(in, projects)
	if err != nil {
		s.failed(w, r, back, err)
		return
	}
	repo, err := s.DB.Repo(ctx, pull.RepoID)
	if err != nil {
		s.failed(w, r, back, err)
		return
	}
	// Source: the audit log names the client, and the runner then knows a
	// local comment's id is Atoll's, not one the host could reply to.
	done, err := s.Commands.Submit(ctx, atoll.CommandSubmission{Repo: *repo, Pull: *pull, Command: projectCommand(in.Command, sel),
		User: user.Name, Via: atoll.ViaDashboard, Source: source(r)})
	if atoll.ErrorCode(err) == atoll.EINVALID {
		// The stored names do not make a comment the grammar reads back
		// as this project (a name with spaces): typed, it would not either.
		err = atoll.Errorf(atoll.EINVALID, "The project cannot be named in a comment; use the comment box.")
	}
	if err != nil {
		s.failed(w, r, back, err)
		return
	}
	reqID, comment := done.RequestID, done.Comment
	if reqID == 0 {
		s.failed(w, r, back, atoll.Errorf(atoll.EINTERNAL, "The command %q was not queued.", comment))
		return
	}
	var of int64
	out := pullCommandResult{RequestID: reqID, Comment: comment}
	if sel != nil {
		of, out.Project = sel.ID, sel.Label()
	}
	out.Follow = templates.NoticePath(pull.Repo, pull.Number, reqID, of)
	req, err := s.DB.Request(ctx, reqID)
	if err != nil {
		s.failed(w, r, back, err)
		return
	}
	n, err := s.notice(ctx, pull, req, of)
	if err != nil {
		s.failed(w, r, back, err)
		return
	}
	msg := requestPhraseOf(in.Command, reqID)
	s.Logger.Info("command from the dashboard", "user", user.Name, "repo", pull.Repo, "pull", pull.Number, "comment", comment, "request", reqID)
	if isHTMX(r) {
		// A reload of the page keeps showing the outcome.
		w.Header().Set("HX-Replace-Url", out.Follow)
	}
	// The page's own link to the outcome: the row, or the projects section.
	s.done(w, r, out.Follow+"#"+templates.NoticeTarget(of), msg, templates.CommandNotice(n), out)
}

func requestPhraseOf(cmd string, id int64) string {
	name := "Plan"
	if cmd == atoll.CommandApply {
		name = "Apply"
	}
	return name + " queued as request #" + strconv.FormatInt(id, 10) + "."
}

// readPullCommand reads a form or a JSON body.
func readPullCommand(w http.ResponseWriter, r *http.Request) (pullCommandRequest, error) {
	var in pullCommandRequest
	media, _, _ := mime.ParseMediaType(r.Header.Get("Content-Type"))
	if media == "application/json" {
		if err := readJSON(w, r, &in, jsonBody{Limit: 64 << 10, Like: `{"command":"plan","project":"name"}`}); err != nil {
			return in, err
		}
	} else {
		if err := readForm(w, r, 64<<10); err != nil {
			return in, err
		}
		in = pullCommandRequest{Command: r.PostForm.Get("command"), Project: r.PostForm.Get("project"),
			Dir: r.PostForm.Get("dir"), Workspace: r.PostForm.Get("workspace")}
	}
	if in.Command != atoll.CommandPlan && in.Command != atoll.CommandApply {
		return in, atoll.Errorf(atoll.EINVALID, "command must be plan or apply.")
	}
	return in, nil
}

// selectProject finds the project the request names among the pull
// request's: nil means every project.
func selectProject(in pullCommandRequest, projects []atoll.Project) (*atoll.Project, error) {
	if in.Project == "" && in.Dir == "" {
		if in.Workspace != "" {
			return nil, atoll.Errorf(atoll.EINVALID, "workspace needs dir.")
		}
		return nil, nil
	}
	if in.Project != "" && (in.Dir != "" || in.Workspace != "") {
		return nil, atoll.Errorf(atoll.EINVALID, "Name a project or a dir and workspace, not both.")
	}
	ws := in.Workspace
	if ws == "" {
		ws = atoll.DefaultWorkspace
	}
	for i, p := range projects {
		if in.Project != "" && p.Name == in.Project || in.Project == "" && p.Dir == in.Dir && p.Workspace == ws {
			return &projects[i], nil
		}
	}
	if in.Project != "" {
		return nil, atoll.Errorf(atoll.EINVALID, "This pull request has no project named %q.", truncate(in.Project, 100))
	}
	return nil, atoll.Errorf(atoll.EINVALID, "This pull request has no project in dir %q, workspace %q.", truncate(in.Dir, 100), truncate(ws, 100))
}

// projectCommand is command name on project p (nil: every project of the
// pull request), named as it is stored: by name, or by dir and workspace.
func projectCommand(name string, p *atoll.Project) atoll.Command {
	cmd := atoll.Command{Name: name}
	if p == nil {
		return cmd
	}
	if p.Name != "" {
		cmd.Project = p.Name
	} else {
		cmd.Dir, cmd.Workspace = p.Dir, p.Workspace
	}
	return cmd
}

func truncate(s string, n int) string {
	if len(s) > n {
		return s[:n] + "…"
	}
	return s
}
