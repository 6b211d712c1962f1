package ipranges

import (
	"context"
	"fmt"
	"net/http"
	"sync"
	"time"

	"github.com/robotsproxy/robotsproxy/internal/access"
	"github.com/robotsproxy/robotsproxy/policy"
)

// MaxBody bounds a ranges file, in octets (Google's largest, the
// user-triggered fetchers', is about 60 KiB).
const MaxBody = 4 << 20

// MinInterval is how soon a source is fetched again: JAFAR
// (draft-illyes-webbotauth-jafar-00, "Fetching and Caching") has
// consumers poll no more often than once an hour.
const MinInterval = time.Hour

// doc is a parsed ranges file as access.FetchDocument keeps it.
type doc struct{ f *File }

func (d doc) Retained() int { return len(d.f.Prefixes) * 48 }

// Fetch gets the ranges file at url with the proxy's fetcher (its
// destination guard, timeouts, redirect limit and header limit) and
// parses it. It returns the file, the octets as fetched and the access
// (its FetchedAt and FinalURL). An error says why: a status that is not
// 2xx, a network error, a refused destination, a body over MaxBody
// octets, or one that does not parse (Parse).
func Fetch(ctx context.Context, f *access.Fetcher, url string) (*File, []byte, policy.Access, error) {
	a := f.FetchDocument(ctx, url, access.DocumentOptions{What: "published IP ranges", Accept: "application/json, text/plain;q=0.5",
		MaxBytes: MaxBody, Parse: func(body []byte, _ http.Header) (policy.Document, error) {
			file, err := Parse(body)
			if err != nil {
				return nil, err
			}
			return doc{file}, nil
		}})
	if a.Result != policy.Successful {
		if a.Err != nil {
			return nil, nil, a, fmt.Errorf("fetch %s: %s (status %d): %w", url, a.Result, a.Status, a.Err)
		}
		return nil, nil, a, fmt.Errorf("fetch %s: %s (status %d)", url, a.Result, a.Status)
	}
	return a.Doc.(doc).f, a.Raw, a, nil
}

// UpdateOptions configure Update.
type UpdateOptions struct {
	// Fetcher fetches the files; required.
	Fetcher *access.Fetcher
	// DataDir is the data directory the copies are kept in; required.
	DataDir string
	// Force fetches a source even when its copy is younger than
	// MinInterval.
	Force bool
	// Now is the clock; nil is time.Now.
	Now func() time.Time
}

// Outcome is what Update did with one source.
type Outcome struct {
	Source Source
	// Record is the stored copy's record after the update: the new one,
	// the one kept when the source was fresh, or the previous one (nil
	// when none) when the fetch failed.
	Record *Record
	// Fresh: not fetched, as the copy is younger than MinInterval.
	Fresh bool
	// Err says why the source was not updated; the previous copy, if
	// any, is kept.
	Err error
}

// Update fetches each source and stores its copy (Save), four at a time.
// A source fails alone: its previous copy is kept, and its Outcome says
// why. A copy is replaced only once the new file has parsed.
func Update(ctx context.Context, srcs []Source, o UpdateOptions) []Outcome {
	if o.Now == nil {
		o.Now = time.Now
	}
	out := make([]Outcome, len(srcs))
	sem := make(chan struct{}, 4)
	var wg sync.WaitGroup
	for i, s := range srcs {
		wg.Add(1)
		go func() {
			defer wg.Done()
			sem <- struct{}{}
			defer func() { <-sem }()
			out[i] = update(ctx, s, o)
		}()
	}
	wg.Wait()
	return out
}

func update(ctx context.Context, s Source, o UpdateOptions) Outcome {
	oc := Outcome{Source: s}
	prev, err := Lookup(o.DataDir, s.Name)
	if err != nil {
		oc.Err = err
		return oc
	}
	oc.Record = prev
	if prev != nil && !o.Force && prev.URL == s.URL && o.Now().Sub(prev.FetchedAt) < MinInterval {
		oc.Fresh = true
		return oc
	}
	f, body, a, err := Fetch(ctx, o.Fetcher, s.URL)
	if err != nil {
		oc.Err = err
		return oc
	}
	rec := Record{Name: s.Name, Operator: s.Operator, URL: s.URL, Tokens: s.Tokens, FetchedAt: a.FetchedAt.UTC()}
	if a.FinalURL != "" && a.FinalURL != s.URL {
		rec.FinalURL = a.FinalURL
	}
	saved, err := Save(o.DataDir, rec, body, f)
	if err != nil {
		oc.Err = err
		return oc
	}
	oc.Record = &saved
	return oc
}
