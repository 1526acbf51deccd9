package pypipm

import (
	"context"
	"log/slog"

	"github.com/symposium-dev/symposium-pm/pm-pypi/simpleapi"
)

// redactingHandler strips URL credentials from every message and string or
// error attribute before its inner handler sees them: warnings quote lines
// of requirements files and lockfiles, which may carry tokens
// ("-e git+https://${TOKEN}@github.com/...").
type redactingHandler struct{ inner slog.Handler }

// Enabled defers to the inner handler.
func (h redactingHandler) Enabled(ctx context.Context, l slog.Level) bool {
	return h.inner.Enabled(ctx, l)
}

// Handle redacts the record, then passes it on.
func (h redactingHandler) Handle(ctx context.Context, r slog.Record) error {
	out := slog.NewRecord(r.Time, r.Level, simpleapi.RedactText(r.Message), r.PC)
	r.Attrs(func(a slog.Attr) bool {
		out.AddAttrs(redactAttr(a))
		return true
	})
	return h.inner.Handle(ctx, out)
}

// WithAttrs redacts the attributes too.
func (h redactingHandler) WithAttrs(as []slog.Attr) slog.Handler {
	red := make([]slog.Attr, len(as))
	for i, a := range as {
		red[i] = redactAttr(a)
	}
	return redactingHandler{h.inner.WithAttrs(red)}
}

// WithGroup wraps the inner handler's group.
func (h redactingHandler) WithGroup(name string) slog.Handler {
	return redactingHandler{h.inner.WithGroup(name)}
}

func redactAttr(a slog.Attr) slog.Attr {
	v := a.Value.Resolve()
	switch v.Kind() {
	case slog.KindString:
		return slog.String(a.Key, simpleapi.RedactText(v.String()))
	case slog.KindGroup:
		g := v.Group()
		red := make([]any, len(g))
		for i, x := range g {
			red[i] = redactAttr(x)
		}
		return slog.Group(a.Key, red...)
	case slog.KindAny:
		if err, ok := v.Any().(error); ok {
			return slog.String(a.Key, simpleapi.RedactText(err.Error()))
		}
		if s, ok := v.Any().(interface{ String() string }); ok {
			return slog.String(a.Key, simpleapi.RedactText(s.String()))
		}
	}
	return slog.Attr{Key: a.Key, Value: v}
}
