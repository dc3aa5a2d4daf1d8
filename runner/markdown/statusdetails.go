package markdown

import (
	"fmt"
	"strings"

	"github.com/atollhq/atoll"
)

// maxExcerptLines bounds the output excerpt of StatusDetails: enough to
// see what a plan does or why a job failed, short enough for a status.
const maxExcerptLines = 20

// StatusDetails is the longer text of a project's status, for hosts that
// show one (a GitHub check run's summary): the change counts as
// "+add ~change -destroy" and a short excerpt of the output. For a plan the
// excerpt is the resource headers ("# aws_s3_bucket.b will be created");
// for a failure, the end of the error.
func StatusDetails(res ProjectResult) string {
	var b strings.Builder
	if s, ok := summaryOf(res); ok && res.Error == "" {
		fmt.Fprintf(&b, "**+%d ~%d -%d**", s.Add, s.Change, s.Destroy)
		if s.Import > 0 {
			fmt.Fprintf(&b, " (%d to import)", s.Import)
		}
		b.WriteString("\n\n")
	}
	if excerpt := excerptOf(res); excerpt != "" {
		fenced(&b, "", excerpt)
	}
	return b.String()
}

func excerptOf(res ProjectResult) string {
	if res.Error != "" {
		lines := strings.Split(strings.TrimRight(res.Error, "\n"), "\n")
		return strings.Join(lines[max(0, len(lines)-maxExcerptLines):], "\n")
	}
	var picked []string
	more := 0
	for _, line := range strings.Split(res.Output, "\n") {
		t := strings.TrimSpace(line)
		if !strings.HasPrefix(t, "# ") {
			continue
		}
		if len(picked) == maxExcerptLines {
			more++
			continue
		}
		picked = append(picked, t)
	}
	if more > 0 {
		picked = append(picked, fmt.Sprintf("... and %d more", more))
	}
	if line := planLine(res); line != "" && res.Command != atoll.JobApply {
		picked = append(picked, line)
	}
	return strings.Join(picked, "\n")
}
