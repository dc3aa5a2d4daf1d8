package templates

import (
	"fmt"
	"time"
)

// absolute is a time in full with its zone (UTC), for hovers.
func absolute(t time.Time) string { return t.UTC().Format("Mon 2 Jan 2006 15:04:05 MST") }

// span is how long from start to end (now while end is nil), or "" before
// start.
func span(now time.Time, start, end *time.Time) string {
	if start == nil {
		return ""
	}
	if end != nil {
		now = *end
	}
	d := max(now.Sub(*start), 0)
	switch {
	case d < time.Minute:
		return fmt.Sprintf("%.1f s", d.Seconds())
	case d < time.Hour:
		return fmt.Sprintf("%d min %d s", int(d/time.Minute), int(d%time.Minute/time.Second))
	default:
		return fmt.Sprintf("%d h %d min", int(d/time.Hour), int(d%time.Hour/time.Minute))
	}
}

// spanTitle says when a span started and ended, with the zone.
func spanTitle(start, end *time.Time) string {
	if start == nil {
		return ""
	}
	if end == nil {
		return "Started " + absolute(*start) + ", still running"
	}
	return absolute(*start) + " to " + absolute(*end)
}
