package accesslog

import (
	"fmt"

	"github.com/robotsproxy/robotsproxy/internal/audit"
	"github.com/robotsproxy/robotsproxy/policy"
)

// archiveHistory reads the robots.txt history of url (such as
// "https://example.org/robots.txt") from the proxy's robots.txt archive
// in dir (audit.archive_dir): each fetch that got a different body starts
// a version, in force from when it was fetched. A fetch answered 4xx
// (unavailable) starts a version without robots.txt (everything allowed,
// RFC 9309 2.3.1.3). An unreachable fetch starts none: the crawler keeps
// the copy it has (RFC 9309 2.4).
func archiveHistory(dir, url string) (*History, error) {
	names, err := audit.RecordsOfURL(dir, url)
	if err != nil {
		return nil, fmt.Errorf("robots history archive:%s:%s: %w", dir, url, err)
	}
	var vs []Version
	prev := "\x00" // the body SHA-256 of the version in force, "" for none
	for _, n := range names {
		rec, err := audit.ReadRecord(dir, n)
		if err != nil {
			return nil, fmt.Errorf("robots history archive:%s:%s: %w", dir, url, err)
		}
		var sha string
		switch rec.Result {
		case policy.Successful:
			sha = rec.SHA256
		case policy.Unavailable:
			sha = ""
		default:
			continue
		}
		if sha == prev {
			continue
		}
		prev = sha
		v := Version{From: rec.FetchedAt.UTC(), Source: "archive:" + n}
		if sha == "" {
			v.load = func() ([]byte, bool, error) { return nil, true, nil }
		} else {
			v.load = func() ([]byte, bool, error) {
				b, err := audit.ReadBody(dir, sha)
				if err == nil && len(b) > MaxRobotsBody {
					err = fmt.Errorf("larger than %d octets", MaxRobotsBody)
				}
				return b, false, err
			}
		}
		vs = append(vs, v)
	}
	if len(vs) == 0 {
		return nil, fmt.Errorf("robots history archive:%s:%s: no fetch of that URL is archived (the URL is the robots.txt URL as fetched, such as https://example.org/robots.txt)", dir, url)
	}
	return newHistory(vs)
}
