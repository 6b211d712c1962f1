package verify

import (
	"os"
	"path/filepath"
	"time"

	"github.com/robotsproxy/robotsproxy/internal/audit"
)

// cacheBounds bound the decider's caches: a cache that reaches its bound
// is cleared, as interner is, and refilled from the archive as lines need
// it.
type cacheBounds struct {
	days     int // day folder listings
	fetches  int // fetch records by (robots_url, robots_fetched_at)
	bodies   int // what is known of a body (not its octets)
	compiled int // bodies compiled with the options of a fetch
	octets   int // octets parsed into the compiled bodies (Robots.Size)
}

// defaultBounds are the bounds Verify uses: a log names a few days at a
// time.
func defaultBounds() cacheBounds {
	return cacheBounds{days: 4, fetches: 1 << 14, bodies: 1 << 14, compiled: 1 << 12, octets: 256 << 20}
}

// settle is how long after a day folder last changed a listing of it is
// trusted to be complete: a folder's modification time has the
// granularity of the kernel's clock tick, so a record added in the tick of
// the listing does not change it.
const settle = time.Second

// dayListing is the sorted file names of one day folder of the archive,
// its modification time (zero when there was no folder) and when it was
// listed.
type dayListing struct {
	names         []string
	mtime, listed time.Time
}

// findRecords is FindRecords over the decider's listings: each day folder
// is listed once, and binary search finds a fetch in it. A fetch not in
// the listing lists the folder again when it may have changed since (the
// proxy archives while the logs are verified): its modification time
// changed, or it had changed less than settle before the listing.
func (d *decider) findRecords(url string, t time.Time) ([]string, error) {
	day, q := audit.FindQuery(url, t)
	ls, ok := d.days.Get(day)
	if ok {
		found := q.Match(day, ls.names)
		if len(found) > 0 || ls.listed.Sub(ls.mtime) >= settle && d.mtime(day).Equal(ls.mtime) {
			return found, nil
		}
	}
	ls = dayListing{mtime: d.mtime(day), listed: d.now()} // before listing: a change during it shows later
	names, err := audit.ListDay(d.readDir, d.dir, day)
	if err != nil {
		return nil, err
	}
	ls.names = names
	d.days.Put(day, ls)
	return q.Match(day, ls.names), nil
}

// mtime returns the modification time of a day folder, zero when it
// cannot be read.
func (d *decider) mtime(day string) time.Time {
	info, err := os.Stat(filepath.Join(d.dir, filepath.FromSlash(day)))
	if err != nil {
		return time.Time{}
	}
	return info.ModTime()
}
