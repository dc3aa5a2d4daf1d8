package atoll

import (
	"context"
	"time"
)

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

// LogSearchHit is a job whose log matches, with its last matching lines (in
// log order; the end of a log is where errors are).
type LogSearchHit struct {
	Job   *Job
	Lines []LogLine
	// Matches counts the matching lines read (at least len(Lines)); More
	// says there may be others.
	Matches int
	More    bool
}

// LogSearchResult is one page of a log search.
type LogSearchResult struct {
	Hits  []LogSearchHit
	Terms []string // the phrases searched, for highlighting
	// Older reports matches in jobs older than the page's last hit: ask
	// again with Before set to that job's id.
	Older bool
}

// LogService reads jobs' logs.
type LogService interface {
	Logs(ctx context.Context, jobID, from int64, limit int) ([]LogLine, error)
	LogTail(ctx context.Context, jobID int64, limit int) (lines []LogLine, earlier int64, err error)
	LogWindow(ctx context.Context, jobID, from int64, limit int) (lines []LogLine, earlier, later int64, err error)
	SearchLogs(ctx context.Context, q string, f JobFilter) (LogSearchResult, error)
	// LastLogSeq is the sequence number of job jobID's last stored line.
	LastLogSeq(ctx context.Context, jobID int64) (int64, error)
	// AppendLogs stores a batch of log lines in one write.
	AppendLogs(ctx context.Context, lines []LogLine) error
}
