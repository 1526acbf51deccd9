package pmserver

// WithExample sets the command --help suggests for trying the PM by hand,
// for a PM that `symposium-pm call list_deps -- PROG` (the default) does not
// suit: one that needs flags, or does not answer list_deps.
func WithExample(command string) Option { return func(c *config) { c.example = command } }
