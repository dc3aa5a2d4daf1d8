package atoll

import "time"

// Event is an audit record: who did what, when.
type Event struct {
	ID     int64     `json:"id"`
	Time   time.Time `json:"time"`
	Actor  string    `json:"actor"`
	Action string    `json:"action"`
	Repo   string    `json:"repo,omitempty"`
	Pull   int       `json:"pull,omitempty"`
	Detail string    `json:"detail,omitempty"`
}
