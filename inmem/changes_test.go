package inmem_test

import (
	"sync"
	"testing"
	"time"

	"github.com/atollhq/atoll"
	"github.com/atollhq/atoll/inmem"
)

func TestChangesFanOut(t *testing.T) {
	s := inmem.NewChanges()
	a, cancelA := s.Subscribe()
	b, cancelB := s.Subscribe()
	defer cancelB()
	want := atoll.Change{Topic: atoll.TopicJob, Repo: "acme/infra", Pull: 7, JobID: 3}
	if n := s.Published(); n != 0 {
		t.Fatalf("Published() = %d before any change", n)
	}
	s.Publish(want)
	want.Seq = 1 // numbered as published
	if n := s.Published(); n != 1 {
		t.Fatalf("Published() = %d after one change", n)
	}
	for name, ch := range map[string]<-chan atoll.Change{"a": a, "b": b} {
		select {
		case got := <-ch:
			if got != want {
				t.Fatalf("%s got %+v; want %+v", name, got, want)
			}
		case <-time.After(5 * time.Second):
			t.Fatalf("%s got nothing", name)
		}
	}
	cancelA()
	cancelA() // twice is harmless
	if _, ok := <-a; ok {
		t.Fatal("a cancelled subscription's channel must be closed")
	}
	s.Publish(want) // no longer sent to a
	want.Seq = 2
	if got := <-b; got != want {
		t.Fatalf("b got %+v", got)
	}
	if n := s.Subscribers(); n != 1 {
		t.Fatalf("%d subscribers; want 1", n)
	}
}

// A subscriber that does not read never blocks the publisher; once it
// reads, it finds the changes it had room for, then one "re-read
// everything", and later changes arrive again as usual.
func TestChangesSlowSubscriberIsToldToReRead(t *testing.T) {
	s := inmem.NewChanges()
	slow, cancel := s.Subscribe()
	defer cancel()
	fast, cancelFast := s.Subscribe()
	defer cancelFast()
	var got []atoll.Change
	var wg sync.WaitGroup
	wg.Add(1)
	go func() {
		defer wg.Done()
		for c := range fast {
			got = append(got, c)
		}
	}()
	published := make(chan struct{})
	go func() {
		for i := 1; i <= 1000; i++ {
			s.Publish(atoll.Change{Topic: atoll.TopicJob, JobID: int64(i)})
		}
		close(published)
	}()
	select {
	case <-published:
	case <-time.After(10 * time.Second):
		t.Fatal("Publish blocked on a subscriber that does not read")
	}
	var seen []atoll.Change
	for len(slow) > 0 {
		seen = append(seen, <-slow)
	}
	if len(seen) == 0 || seen[len(seen)-1] != (atoll.Change{}) {
		t.Fatalf("the slow subscriber's last change is %+v; want Topic \"\" (re-read)", seen[len(seen)-1:])
	}
	for i, c := range seen[:len(seen)-1] {
		if c.JobID != int64(i+1) {
			t.Fatalf("change %d is %+v; want job %d, in order", i, c, i+1)
		}
	}
	s.Publish(atoll.Change{Topic: atoll.TopicLock})
	if c := <-slow; c.Topic != atoll.TopicLock {
		t.Fatalf("after catching up: %+v; want the lock change", c)
	}
	cancelFast()
	wg.Wait()
	// The fast reader may lose some too, but is then told so.
	for i, c := range got {
		if c.Topic == "" {
			continue
		}
		if i > 0 && got[i-1].Topic != "" && c.JobID <= got[i-1].JobID && c.Topic == atoll.TopicJob {
			t.Fatalf("fast subscriber: out of order at %d: %+v after %+v", i, c, got[i-1])
		}
	}
}
