package web

import "github.com/atollhq/atoll"

// paths are the addresses of the pages as paths: redirects and links
// within the server stay relative to it, whatever the public URL. They
// come from atoll.Links, which also makes the public URLs the runner
// prints, so that the two cannot disagree (TestRoutesServeEveryLink).
var paths atoll.Links
