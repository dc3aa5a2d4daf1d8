package atoll

import "time"

// Log streams.
const (
	StreamStdout = "stdout"
	StreamStderr = "stderr"
	StreamAtoll  = "atoll" // lines Atoll writes itself (commands run, outcomes)
)

// LogLine is one line of a job's output.
type LogLine struct {
	JobID  int64     `json:"job_id"`
	Seq    int64     `json:"seq"`
	Stream string    `json:"stream"`
	Time   time.Time `json:"time"`
	Text   string    `json:"text"`
}
