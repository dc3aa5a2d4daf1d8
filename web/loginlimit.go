package web

import (
	"net/netip"
	"strings"
	"sync"
	"time"

	"github.com/atollhq/atoll"
)

// Failed sign-ins allowed per window, counted both per client address and
// per account name. Past either limit every attempt it covers is refused,
// the right password too, until the window has passed since its first
// attempt.
const (
	loginFailures = 10
	loginWindow   = 5 * time.Minute
	// maxLoginAddrs and maxLoginAccounts bound the limiter's memory under
	// a flood of addresses or of names.
	maxLoginAddrs    = 4096
	maxLoginAccounts = 4096
)

// loginLimiter slows password guessing. Each attempt is counted as a
// failure before its password is checked, so that concurrent guesses
// cannot all pass the limit before the first is counted; a success takes
// its attempt back and clears the failures against its own account (from
// its address and from everywhere), never those against other accounts.
// Refused attempts check no password and write nothing, so a flood costs
// the database nothing either.
type loginLimiter struct {
	mu       sync.Mutex
	addrs    windows          // by addressKey
	accounts windows          // by accountKey
	clock    func() time.Time // nil: the server's clock (tests move it)
}

// loginAttempt is an attempt counted as a failure until succeeded or
// released says otherwise.
type loginAttempt struct {
	addrKey, accountKey string
	addr, account       *window
}

// reserve counts an attempt from addr at the account name as a failure and
// returns it, unless the address or the account is over its limit: then
// nothing is counted and the error (ETOOMANY) says how long to wait.
func (l *loginLimiter) reserve(addr, name string, now time.Time) (loginAttempt, error) {
	l.mu.Lock()
	defer l.mu.Unlock()
	a := loginAttempt{addrKey: addressKey(addr), accountKey: accountKey(name)}
	if w := l.addrs.live(a.addrKey, now, maxLoginAddrs); w != nil && w.count >= loginFailures {
		return a, tooManyLogins("from your address", w, now)
	}
	if w := l.accounts.live(a.accountKey, now, maxLoginAccounts); w != nil && w.count >= loginFailures {
		return a, tooManyLogins("for this account", w, now)
	}
	a.addr = l.addrs.open(a.addrKey, now, maxLoginAddrs)
	a.account = l.accounts.open(a.accountKey, now, maxLoginAccounts)
	a.addr.add(a.accountKey, 1)
	a.account.add(a.accountKey, 1)
	return a, nil
}

// tooManyLogins is the refusal of an attempt past the limit of w.
func tooManyLogins(whose string, w *window, now time.Time) error {
	wait := w.first.Add(loginWindow).Sub(now)
	return atoll.Errorf(atoll.ETOOMANY, "Too many failed sign-ins %s: try again in %d min.", whose, int((wait+time.Minute-1)/time.Minute))
}

// succeeded turns a into a success: its address forgets its failures
// against a's account (its other failures stay), and the account forgets
// all of its own.
func (l *loginLimiter) succeeded(a loginAttempt) {
	l.mu.Lock()
	defer l.mu.Unlock()
	if l.addrs.holds(a.addrKey, a.addr) {
		a.addr.add(a.accountKey, -a.addr.byAccount[a.accountKey])
		l.addrs.dropEmpty(a.addrKey, a.addr)
	}
	if l.accounts.holds(a.accountKey, a.account) {
		a.account.add(a.accountKey, -a.account.byAccount[a.accountKey])
		l.accounts.dropEmpty(a.accountKey, a.account)
	}
}

// released takes a back: no password was compared (the database failed),
// so it was no guess.
func (l *loginLimiter) released(a loginAttempt) {
	l.mu.Lock()
	defer l.mu.Unlock()
	if l.addrs.holds(a.addrKey, a.addr) && a.addr.byAccount[a.accountKey] > 0 {
		a.addr.add(a.accountKey, -1)
		l.addrs.dropEmpty(a.addrKey, a.addr)
	}
	if l.accounts.holds(a.accountKey, a.account) && a.account.byAccount[a.accountKey] > 0 {
		a.account.add(a.accountKey, -1)
		l.accounts.dropEmpty(a.accountKey, a.account)
	}
}

// addressKey is the limiter's key of a client address: an IPv4 address
// whole (also when written as IPv4-mapped IPv6), an IPv6 address by its
// /64, since a single host is commonly given a whole /64 and may use any
// address in it. Anything else (not an IP address) is its own key.
func addressKey(addr string) string {
	ip, err := netip.ParseAddr(addr)
	if err != nil {
		return addr
	}
	ip = ip.Unmap().WithZone("")
	if ip.Is4() {
		return ip.String()
	}
	p, err := ip.Prefix(64)
	if err != nil {
		return ip.String()
	}
	return p.String()
}

// accountKey is the limiter's key of the account name typed: trimmed and
// lower-cased, so that "Admin " and "admin" share their count. Names that
// match no account are counted too, so that a refusal never tells which
// names exist.
func accountKey(name string) string {
	return strings.ToLower(strings.TrimSpace(name))
}

// window counts the attempts under one key since first, split by account
// key: an address's success clears only its failures against that account.
type window struct {
	first     time.Time
	count     int
	byAccount map[string]int
}

// add adds n attempts against account; the count never goes below zero.
func (w *window) add(account string, n int) {
	if w.byAccount == nil {
		w.byAccount = map[string]int{}
	}
	n = max(n, -w.byAccount[account])
	w.byAccount[account] += n
	w.count += n
	if w.byAccount[account] == 0 {
		delete(w.byAccount, account)
	}
}

// windows are the live windows by key, at most a given number. When that
// many are live, new keys share one overflow window: a flood of addresses
// or names neither grows memory nor wipes the counts already kept, and
// only limits new keys together while it lasts.
type windows struct {
	m        map[string]*window
	overflow *window
}

// live returns key's window if it has not passed, else nil; for a key
// without one, when the map is full, the overflow window that stands for
// it.
func (ws *windows) live(key string, now time.Time, limit int) *window {
	w := ws.m[key]
	if w == nil && len(ws.m) >= limit {
		ws.prune(now)
		if len(ws.m) >= limit {
			w = ws.overflow
		}
	}
	if w == nil || now.Sub(w.first) >= loginWindow {
		return nil
	}
	return w
}

// open returns key's live window, starting one if there is none: in the
// map if it has room for it (after dropping passed windows), else the
// overflow window.
func (ws *windows) open(key string, now time.Time, limit int) *window {
	if w := ws.m[key]; w != nil && now.Sub(w.first) < loginWindow {
		return w
	}
	delete(ws.m, key)
	if len(ws.m) >= limit {
		ws.prune(now)
	}
	if len(ws.m) < limit {
		if ws.m == nil {
			ws.m = map[string]*window{}
		}
		ws.m[key] = &window{first: now}
		return ws.m[key]
	}
	if ws.overflow == nil || now.Sub(ws.overflow.first) >= loginWindow {
		ws.overflow = &window{first: now}
	}
	return ws.overflow
}

// holds reports whether w is still key's window or the overflow window,
// not one that a new window has since replaced.
func (ws *windows) holds(key string, w *window) bool {
	return w != nil && (ws.m[key] == w || ws.overflow == w)
}

// dropEmpty forgets key's window w once it counts nothing.
func (ws *windows) dropEmpty(key string, w *window) {
	if w.count == 0 && ws.m[key] == w {
		delete(ws.m, key)
	}
}

// prune drops the windows that have passed.
func (ws *windows) prune(now time.Time) {
	for k, w := range ws.m {
		if now.Sub(w.first) >= loginWindow {
			delete(ws.m, k)
		}
	}
}
