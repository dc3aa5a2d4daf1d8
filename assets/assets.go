// Package assets holds the static files of Atoll's HTML pages: one
// stylesheet and one small script, embedded in the binary. There is no
// build step: edit the files and rebuild.
package assets

import (
	"crypto/sha256"
	"embed"
	"encoding/hex"
	"io/fs"
	"sort"
)

// FS holds the static files at its root (atoll.css, atoll.js, locks.js, and htmx
// 2.0.11 vendored from npm with its licence).
//
//go:embed *.css *.js *.LICENSE
var FS embed.FS

// Version is a short hash of every file in FS, for cache-busting URLs
// (/assets/atoll.css?v=Version).
var Version = func() string {
	names, _ := fs.Glob(FS, "*")
	sort.Strings(names)
	h := sha256.New()
	for _, n := range names {
		b, _ := fs.ReadFile(FS, n)
		h.Write([]byte(n))
		h.Write([]byte{0})
		h.Write(b)
	}
	return hex.EncodeToString(h.Sum(nil))[:12]
}()
