package web

import (
	"net"
	"net/http"
)

// source is where a request came from, for the audit log: the address of
// the connection's peer. Forwarding headers are not trusted (any client
// can send them); behind a proxy this is the proxy's address.
func source(r *http.Request) string {
	host, _, err := net.SplitHostPort(r.RemoteAddr)
	if err != nil || host == "" {
		if r.RemoteAddr != "" {
			return r.RemoteAddr
		}
		return "api"
	}
	return host
}
