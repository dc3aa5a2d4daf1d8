package web

import (
	"encoding/json"
	"net/http"
	"strconv"
	"strings"

	"github.com/atollhq/atoll"
	"github.com/atollhq/atoll/store"
	"github.com/atollhq/atoll/vcs"
)

type commentRequest struct {
	Body string `json:"body"`
	// User is refused: the comment's author is the signed-in user.
	User *string `json:"user"`
}

// handleComment runs a comment as if posted on the pull request. On a local
// repository it is also added to the pull request's conversation.
func (s *Server) handleComment(w http.ResponseWriter, r *http.Request) {
	ctx := r.Context()
	var in commentRequest
	dec := json.NewDecoder(http.MaxBytesReader(w, r.Body, 1<<20))
	dec.DisallowUnknownFields()
	if err := dec.Decode(&in); err != nil {
		s.error(w, r, atoll.Errorf(atoll.EINVALID, "Body must be JSON like {\"body\":\"atlantis plan\"}."))
		return
	}
	if strings.TrimSpace(in.Body) == "" || len(in.Body) > 65536 {
		s.error(w, r, atoll.Errorf(atoll.EINVALID, "Comment body must be 1 to 65536 characters."))
		return
	}
	if in.User != nil {
		s.error(w, r, atoll.Errorf(atoll.EINVALID, "The user field is not accepted: the comment is recorded as the signed-in user (%s). Leave it out.", actor(r)))
		return
	}
	user := actor(r)
	number, err := strconv.Atoi(r.PathValue("number"))
	if err != nil || number <= 0 {
		s.error(w, r, atoll.Errorf(atoll.EINVALID, "Invalid pull request number."))
		return
	}
	full := r.PathValue("owner") + "/" + r.PathValue("name")
	pull, err := s.DB.PullByNumber(ctx, full, number)
	if err != nil {
		s.error(w, r, err)
		return
	}
	repo, err := s.DB.Repo(ctx, pull.RepoID)
	if err != nil {
		s.error(w, r, err)
		return
	}
	var commentID int64
	if repo.VCS == atoll.VCSLocal {
		err = s.DB.Update(ctx, func(tx *store.Tx) (err error) {
			commentID, err = tx.AddComment(pull.ID, user, in.Body)
			return err
		})
		if err != nil {
			s.error(w, r, err)
			return
		}
	}
	queued, err := s.Runner.HandleEvent(ctx, &vcs.Event{Kind: vcs.EventComment, Repo: *repo,
		Pull: atoll.Pull{Number: number}, User: user, Comment: in.Body, CommentID: strconv.FormatInt(commentID, 10), Source: source(r)})
	if err != nil {
		s.error(w, r, err)
		return
	}
	writeJSON(w, http.StatusCreated, map[string]any{"queued": queued, "comment_id": commentID})
}
