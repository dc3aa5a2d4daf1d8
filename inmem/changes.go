// Package inmem holds in-process implementations of Atoll's services: state
// that lives only as long as the process, such as the fan-out of committed
// changes to the dashboard's live pages.
package inmem

import (
	"sync"

	"github.com/atollhq/atoll"
)

// subscriberBuffer is how many changes a subscriber may fall behind by
// before it is told to re-read everything instead.
const subscriberBuffer = 64

// Changes implements atoll.ChangeService: Publish never blocks, whatever
// the subscribers do.
type Changes struct {
	mu   sync.Mutex
	subs map[*subscriber]struct{}
	seq  uint64 // the last change's Seq
}

type subscriber struct {
	ch chan atoll.Change
	// lost is set once a change was dropped: the subscriber's last queued
	// change is then Change{Topic: ""} (re-read everything), and changes
	// are dropped until it has room again.
	lost bool
}

var _ atoll.ChangeService = (*Changes)(nil)

// NewChanges returns a ChangeService without subscribers.
func NewChanges() *Changes { return &Changes{subs: map[*subscriber]struct{}{}} }

// Publish sends c to every subscriber without blocking. A subscriber whose
// buffer is full gets, in its last free slot, a Change with Topic "" that
// stands for every change it misses until it catches up: it must re-read
// everything once it receives it, which covers what was dropped before.
func (s *Changes) Publish(c atoll.Change) {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.seq++
	c.Seq = s.seq
	for sub := range s.subs {
		// Only Publish sends, under s.mu, so len only shrinks meanwhile.
		switch {
		case len(sub.ch) < cap(sub.ch)-1:
			sub.lost = false
			sub.ch <- c
		case !sub.lost:
			sub.lost = true
			sub.ch <- atoll.Change{} // the slot kept free for it
		}
	}
}

// Subscribe returns the changes published from now on and a function that
// ends the subscription (and closes the channel); it may be called twice.
func (s *Changes) Subscribe() (<-chan atoll.Change, func()) {
	sub := &subscriber{ch: make(chan atoll.Change, subscriberBuffer)}
	s.mu.Lock()
	s.subs[sub] = struct{}{}
	s.mu.Unlock()
	return sub.ch, func() {
		s.mu.Lock()
		defer s.mu.Unlock()
		if _, ok := s.subs[sub]; ok {
			delete(s.subs, sub)
			close(sub.ch)
		}
	}
}

// Published is the Seq of the last change published (0: none yet).
func (s *Changes) Published() uint64 {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.seq
}

// Subscribers is how many subscriptions are open (metrics, tests).
func (s *Changes) Subscribers() int {
	s.mu.Lock()
	defer s.mu.Unlock()
	return len(s.subs)
}
