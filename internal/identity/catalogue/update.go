package catalogue

import (
	"net/http"

	"github.com/robotsproxy/robotsproxy/internal/identity/upstream"
)

// Update downloads, for each source named in commits (source name →
// commit), its data file and LICENSE at that commit from raw into the
// agents folder dir, and rewrites those rows of manifest (see
// upstream.Update). An unknown source, a failed download or a non-200
// answer is an error, and nothing is written then.
func Update(client *http.Client, raw, dir, manifest string, commits map[string]string) error {
	return upstream.Update(client, raw, dir, manifest, Upstream(), commits)
}

// Upstream returns the catalogue's sources as Layout lays them out.
func Upstream() []upstream.Source {
	var s []upstream.Source
	for _, l := range Layout {
		s = append(s, upstream.Source{Name: l.Name, Dir: l.Dir, Files: []string{l.File}})
	}
	return s
}
