package pmserver

import (
	"context"
	"encoding/json"
)

// Vetted is a pre-encoded active_plugins result that its PM checked when
// it stored it and has protected since by a checksum it verified on
// reading it back: bytes EncodeOffers returned (so valid UTF-8 and JSON),
// kept with a checksum over them and served only when the checksum holds.
//
// The harness sends a Vetted result after checking its framing only: it
// must be one line (no newline byte) and start with '[' and end with ']'.
// It does not scan it again for UTF-8 or JSON validity, which costs far
// more than the rest of a cached hook on a large answer; a PM that cannot
// vouch for its bytes that way returns them through RawActivePlugins
// instead. The host validates every answer anyway.
type Vetted []byte

// VettedActivePlugins is RawActivePlugins for answers the PM vetted when
// it stored them (see Vetted). It is optional and tried after
// StreamedActivePlugins and before RawActivePlugins and the usual path,
// which answer when it declines; its
// result must be exactly what the usual path would answer to these params
// now, under the same rules as RawActivePlugins' (diagnostics included).
type VettedActivePlugins interface {
	// ActivePluginsVetted receives the request's params exactly as they
	// arrived (nil when the request had none) and returns either the
	// complete result to send and true, or false to decline; a non-nil
	// error is answered as PM.ActivePlugins' errors are.
	ActivePluginsVetted(ctx context.Context, params json.RawMessage) (Vetted, bool, error)
}
