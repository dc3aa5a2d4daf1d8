package runner

import "github.com/atollhq/atoll"

// links are the addresses comments, statuses and notifications point at:
// atoll.Links owns them, so they are the routes the web server serves.
func (r *Runner) links() atoll.Links { return atoll.Links{Base: r.PublicURL} }
