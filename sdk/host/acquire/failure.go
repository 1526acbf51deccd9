package acquire

import (
	"encoding/json"
	"os"
	"path/filepath"
	"time"

	"github.com/symposium-dev/symposium-pm/sdk/pkgfile"
)

// Failure is what a failed acquisition (a `symposium-pm sync`) leaves
// behind, so that later commands can say why a PM is still not acquired
// instead of advising to acquire it again.
type Failure struct {
	// Source is the installation source, as [Source.String] renders it.
	Source string `json:"source"`
	// At is when the acquisition failed.
	At time.Time `json:"at"`
	// Error is what went wrong.
	Error string `json:"error"`
}

// failureFile is where the last failure to acquire src's PM is
// remembered, outside the copies acquisition manages.
func failureFile(cacheDir string, src Source) string {
	return filepath.Join(cacheDir, "sync-failures", src.PM+".json")
}

// RecordFailure remembers err as the last failure to acquire src under
// cacheDir, or forgets the last failure when err is nil. Recording is best
// effort: a cache that cannot be written loses the record, not the sync.
func RecordFailure(cacheDir string, src Source, err error) {
	p := failureFile(cacheDir, src)
	if err == nil {
		_ = os.Remove(p)
		return
	}
	b, jerr := json.Marshal(Failure{Source: src.String(), At: time.Now().UTC(), Error: err.Error()})
	if jerr != nil || os.MkdirAll(filepath.Dir(p), 0o755) != nil {
		return
	}
	_ = os.WriteFile(p, b, 0o644)
}

// LastFailure returns the failure remembered for src under cacheDir, or
// nil when there is none (or it was for another source of the same PM).
func LastFailure(cacheDir string, src Source) *Failure {
	p := failureFile(cacheDir, src)
	data, err := pkgfile.ReadFile(filepath.Dir(p), filepath.Base(p), maxRecord)
	if err != nil {
		return nil
	}
	var sf Failure
	if json.Unmarshal(data, &sf) != nil || sf.Error == "" || sf.Source != src.String() {
		return nil
	}
	return &sf
}
