package web

import (
	"context"
	"net/http"
	"strings"

	"github.com/atollhq/atoll"
	"github.com/atollhq/atoll/templates"
)

type commentRequest struct {
	Body string `json:"body"`
	// User is refused: the comment's author is the signed-in user.
	User *string `json:"user"`
}

// commentResult is what posting a comment did.
type commentResult struct {
	Queued    bool  `json:"queued"`
	CommentID int64 `json:"comment_id"`
}

// handleComment runs a comment as if posted on the pull request (JSON API).
func (s *Server) handleComment(w http.ResponseWriter, r *http.Request) {
	var in commentRequest
	if err := readJSON(w, r, &in, jsonBody{Limit: 1 << 20, Like: `{"body":"atlantis plan"}`}); err != nil {
		s.error(w, r, err)
		return
	}
	if in.User != nil {
		s.error(w, r, atoll.Errorf(atoll.EINVALID, "The user field is not accepted: the comment is recorded as the signed-in user (%s). Leave it out.", actor(r)))
		return
	}
	pull, err := s.pullOf(r.Context(), r)
	if err != nil {
		s.error(w, r, err)
		return
	}
	out, err := s.postComment(r.Context(), r, pull, in.Body)
	if err != nil {
		s.error(w, r, err)
		return
	}
	writeJSON(w, http.StatusCreated, out)
}

// handleCommentForm is the pull request page's comment box: form field
// body, posted as the signed-in user through the same path as the API. The
// new comment and its replies appear through the page's live sections.
func (s *Server) handleCommentForm(w http.ResponseWriter, r *http.Request) {
	ctx := r.Context()
	pull, err := s.pullOf(ctx, r)
	if err != nil {
		s.failed(w, r, "/", err)
		return
	}
	back := paths.Pull(pull.Repo, pull.Number) + "#" + templates.CommentFormAnchor
	if err := readForm(w, r, 1<<20); err != nil {
		s.failed(w, r, back, err)
		return
	}
	out, err := s.postComment(ctx, r, pull, r.PostForm.Get("body"))
	if err != nil {
		s.failed(w, r, back, err)
		return
	}
	msg := "Comment posted."
	if out.Queued {
		msg = "Comment posted: its command is queued."
	}
	s.done(w, r, back, msg, nil, out)
}

// postComment runs body as a comment on pull by the signed-in user, as if
// posted on the pull request. On a local repository it is also added to
// the pull request's conversation.
func (s *Server) postComment(ctx context.Context, r *http.Request, pull *atoll.Pull, body string) (commentResult, error) {
	var out commentResult
	if strings.TrimSpace(body) == "" || len(body) > 65536 {
		return out, atoll.Errorf(atoll.EINVALID, "Comment body must be 1 to 65536 characters.")
	}
	if s.Commands == nil {
		return out, atoll.Errorf(atoll.EUNAVAILABLE, "This server runs no commands.")
	}
	repo, err := s.DB.Repo(ctx, pull.RepoID)
	if err != nil {
		return out, err
	}
	done, err := s.Commands.Comment(ctx, atoll.CommentSubmission{Repo: *repo, Pull: *pull, User: actor(r), Source: source(r), Body: body})
	out.Queued, out.CommentID = done.RequestID != 0, done.CommentID
	return out, err
}
