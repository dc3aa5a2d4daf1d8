package terraform

import (
	"bytes"
	"fmt"
	"strings"
	"sync"
	"unicode/utf8"

	"github.com/atollhq/atoll"
	"github.com/atollhq/atoll/ansi"
)

const (
	// MaxOutput caps the output Run returns; the full text still goes to
	// emit. Half is kept from the start and half from the end, where
	// terraform prints summaries and errors.
	MaxOutput = 4 << 20
	// MaxLine is the longest line emitted; longer lines are split.
	MaxLine = 64 << 10

	streamStdout = atoll.StreamStdout
	streamStderr = atoll.StreamStderr

	stderrTailLines = 40
)

// collector turns the bytes of both streams into lines. Its mutex makes
// emit calls sequential even though exec copies each stream in its own
// goroutine.
type collector struct {
	mu   sync.Mutex
	emit func(Line)
	half int

	head      strings.Builder
	tail      []string
	tailBytes int
	dropped   int // lines dropped between head and tail
	full      bool

	stderr  []string // last stderr lines, for error messages
	writers []*lineWriter
}

func newCollector(limit int, emit func(Line)) *collector {
	return &collector{emit: emit, half: limit / 2}
}

func (c *collector) writer(stream string) *lineWriter {
	w := &lineWriter{c: c, stream: stream}
	c.writers = append(c.writers, w)
	return w
}

// flush emits unterminated last lines; call it after the process is done.
func (c *collector) flush() {
	c.mu.Lock()
	defer c.mu.Unlock()
	for _, w := range c.writers {
		if len(w.buf) > 0 {
			c.add(w.stream, w.buf)
			w.buf = nil
		}
	}
}

// add records one line; the caller holds c.mu.
func (c *collector) add(stream string, raw []byte) {
	text := cleanLine(raw)
	if c.emit != nil {
		c.emit(Line{Stream: stream, Text: text})
	}
	if stream == streamStderr {
		c.stderr = append(c.stderr, text)
		if len(c.stderr) > 2*stderrTailLines {
			c.stderr = append(c.stderr[:0], c.stderr[len(c.stderr)-stderrTailLines:]...)
		}
	}
	n := len(text) + 1
	if !c.full && c.head.Len()+n <= c.half {
		c.head.WriteString(text)
		c.head.WriteByte('\n')
		return
	}
	c.full = true
	c.tail = append(c.tail, text)
	c.tailBytes += n
	for c.tailBytes > c.half && len(c.tail) > 0 {
		c.tailBytes -= len(c.tail[0]) + 1
		c.tail = c.tail[1:]
		c.dropped++
	}
}

func (c *collector) String() string {
	c.mu.Lock()
	defer c.mu.Unlock()
	var b strings.Builder
	b.Grow(c.head.Len() + c.tailBytes + 80)
	b.WriteString(c.head.String())
	if c.dropped > 0 {
		fmt.Fprintf(&b, "\n[atoll: %d lines of output omitted here; the job log has them all]\n\n", c.dropped)
	}
	for _, l := range c.tail {
		b.WriteString(l)
		b.WriteByte('\n')
	}
	return b.String()
}

func (c *collector) stderrTail() string {
	c.mu.Lock()
	defer c.mu.Unlock()
	lines := c.stderr
	if len(lines) > stderrTailLines {
		lines = lines[len(lines)-stderrTailLines:]
	}
	return strings.Join(lines, "\n")
}

// lineWriter buffers one stream until a newline or MaxLine bytes.
type lineWriter struct {
	c      *collector
	stream string
	buf    []byte
}

func (w *lineWriter) Write(p []byte) (int, error) {
	w.c.mu.Lock()
	defer w.c.mu.Unlock()
	n := len(p)
	for len(p) > 0 {
		i := bytes.IndexByte(p, '\n')
		if i < 0 {
			w.buf = append(w.buf, p...)
			break
		}
		w.buf = append(w.buf, p[:i]...)
		p = p[i+1:]
		w.emitLong()
		w.c.add(w.stream, w.buf)
		w.buf = w.buf[:0]
	}
	w.emitLong()
	return n, nil
}

// emitLong emits MaxLine-sized pieces of an over-long buffered line.
func (w *lineWriter) emitLong() {
	for len(w.buf) > MaxLine {
		cut := safeCut(w.buf, MaxLine)
		w.c.add(w.stream, w.buf[:cut])
		w.buf = append(w.buf[:0], w.buf[cut:]...)
	}
}

// safeCut returns a split point at or before n that splits neither a UTF-8
// sequence nor an ANSI escape sequence.
func safeCut(b []byte, n int) int {
	cut := n
	if esc := bytes.LastIndexByte(b[max(0, n-32):n], 0x1b); esc >= 0 {
		esc += max(0, n-32)
		if ansi.EscapeLen(b[esc:n]) < 0 && esc > 0 {
			cut = esc
		}
	}
	for i := 0; i < utf8.UTFMax && cut > 1 && !utf8.RuneStart(b[cut]); i++ {
		cut--
	}
	return cut
}

// cleanLine drops ANSI escapes and a CRLF's CR, and makes the text valid
// UTF-8 so it can be stored and shown as is.
func cleanLine(raw []byte) string {
	raw = bytes.TrimSuffix(raw, []byte{'\r'})
	if bytes.IndexByte(raw, 0x1b) >= 0 {
		raw = ansi.AppendEscapesStripped(make([]byte, 0, len(raw)), raw)
	}
	if !utf8.Valid(raw) {
		return strings.ToValidUTF8(string(raw), "\uFFFD")
	}
	return string(raw)
}
