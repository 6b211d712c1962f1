package politeness

import (
	"context"
	"errors"
	"fmt"
	"testing"
	"time"
)

// TestLocalSchedulerLooksAtFewKeys counts the records n new keys make a
// LocalScheduler holding n keys look at for idle ones: none while no key
// can be idle, one per key dropped when they go idle one by one, and at
// most expireStep per new key however many are idle.
func TestLocalSchedulerLooksAtFewKeys(t *testing.T) {
	const n = 1000
	tests := []struct {
		name       string
		maxEntries int
		stagger    time.Duration // between the keys held, then between the new keys
		life       time.Duration // of every key
		wait       time.Duration // between the keys held and the new keys
		wantErr    error         // of each new key
		wantMax    int           // records looked at by one new key, at most
		wantLooked int           // by the n new keys, at most
	}{
		{"every key active", n, 0, time.Hour, 0, ErrFull, 0, 0},
		{"a key idle for each new one", n, time.Millisecond, n * time.Millisecond, 0, nil, 1, n},
		{"every key idle, room for more", 2 * n, 0, time.Millisecond, time.Millisecond, nil, expireStep, n},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			now := time.Unix(1_700_000_000, 0)
			s := NewLocalScheduler(LocalOptions{Now: func() time.Time { return now }, MaxEntries: tt.maxEntries})
			ctx := context.Background()
			key := func(i int) Key { return Key{Token: "Bot", Authority: fmt.Sprintf("https://h%d.example:443", i)} }
			for i := range n {
				if _, err := s.Reserve(ctx, key(i), tt.life, 0); err != nil {
					t.Fatalf("key %d held: %v", i, err)
				}
				now = now.Add(tt.stagger)
			}
			now = now.Add(tt.wait)
			s.looked = 0
			for i := n; i < 2*n; i++ {
				before := s.looked
				if _, err := s.Reserve(ctx, key(i), tt.life, 0); !errors.Is(err, tt.wantErr) {
					t.Fatalf("new key %d: got %v, want %v", i, err, tt.wantErr)
				}
				if d := s.looked - before; d > tt.wantMax {
					t.Fatalf("new key %d: looked at %d records, want at most %d", i, d, tt.wantMax)
				}
				now = now.Add(tt.stagger)
			}
			if s.looked > tt.wantLooked || s.Len() != n {
				t.Errorf("%d new keys: looked at %d records, %d keys held; want at most %d, %d held", n, s.looked, s.Len(), tt.wantLooked, n)
			}
		})
	}
}
