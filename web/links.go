package web

import "github.com/atollhq/atoll"

// paths are the addresses of the pages, as paths: redirects and links
// within the server are relative to it. atoll.Links owns them, as it owns
// the public URLs the runner prints, so that both are the routes below.
var paths atoll.Links
