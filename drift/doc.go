// Package drift holds the rules and wire shapes of drift checks: which
// refs, base branches, paths, workspaces and repositories a drift request
// may name, how a request is validated, how a plan's counts become drift,
// and the JSON that Atlantis's alpha drift API (/api/drift/*) sends, so
// that clients written for Atlantis work against Atoll unchanged.
//
// Everything here is pure: no I/O, no clock, no randomness. Callers pass
// in times and ids; the web layer decodes requests, runs plans and writes
// responses with these types and functions.
package drift
