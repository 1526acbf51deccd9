package cli

import (
	"encoding/json"
	"path/filepath"
	"strconv"
	"time"

	"github.com/symposium-dev/symposium-pm/sdk/host/config"
	"github.com/symposium-dev/symposium-pm/sdk/pkgfile"
	"github.com/symposium-dev/symposium-pm/sdk/regcache"
)

// cachedRegistry is what the cache holds of a git registry: the commit
// symposium-pm-gitregistry last fetched, and when.
type cachedRegistry struct {
	Fetched   bool
	Commit    string
	FetchedAt time.Time
}

// registryState is the part of symposium-pm-gitregistry's state.json
// (<cache>/<name>/<name>-<hash>/state.json) read here.
type registryState struct {
	Name      string    `json:"name"`
	URL       string    `json:"url"`
	Commit    string    `json:"commit"`
	FetchedAt time.Time `json:"fetched_at"`
}

// maxRegistryState bounds a registry cache's state file (64 KiB), a few
// hundred bytes of JSON.
const maxRegistryState = 1 << 16

// registryCache finds r's cache directory under cacheDir by its name and
// URL, without opening (or locking) it. A registry without one has never
// been fetched.
func registryCache(cacheDir string, r config.Registry) cachedRegistry {
	dirs, _ := filepath.Glob(filepath.Join(cacheDir, regcache.NamePart(r.Name), regcache.NamePart(r.Name)+"-*"))
	var found []registryState
	for _, d := range dirs {
		// The registry PM writes the state: a regular file of at most
		// maxRegistryState bytes is read (sdk/pkgfile), never a FIFO.
		data, err := pkgfile.ReadFile(d, regcache.StateFile, maxRegistryState)
		if err != nil {
			continue
		}
		var st registryState
		if err := json.Unmarshal(data, &st); err != nil || len(st.Commit) != 40 {
			continue
		}
		if st.Name != r.Name {
			// Another registry whose name renders alike ("corp plugins"
			// and "corp/plugins" are both corp_plugins), or a state
			// written before names were recorded.
			continue
		}
		if st.URL == r.Git {
			return cachedRegistry{Fetched: true, Commit: st.Commit, FetchedAt: st.FetchedAt}
		}
		found = append(found, st)
	}
	// The registry PM may record the URL otherwise (a github tree URL split
	// into URL and subdir, a local path made absolute): the one cache of
	// this name is this one.
	if len(found) == 1 {
		return cachedRegistry{Fetched: true, Commit: found[0].Commit, FetchedAt: found[0].FetchedAt}
	}
	return cachedRegistry{}
}

// age renders how long ago t was, coarsely.
func age(now, t time.Time) string {
	d := now.Sub(t)
	switch {
	case d < time.Minute:
		return "just now"
	case d < time.Hour:
		return plural(int(d/time.Minute), "minute") + " ago"
	case d < 48*time.Hour:
		return plural(int(d/time.Hour), "hour") + " ago"
	}
	return plural(int(d/(24*time.Hour)), "day") + " ago"
}

func plural(n int, unit string) string {
	if n == 1 {
		return "1 " + unit
	}
	return strconv.Itoa(n) + " " + unit + "s"
}
