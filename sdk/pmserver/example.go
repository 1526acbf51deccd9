package pmserver

// WithExample sets the command --help suggests for trying the PM by hand,
// for a PM that the default does not suit (one that needs flags): `symposium-pm
// call list_deps -- PROG` for a DepLister, else `symposium-pm call
// active_plugins -- PROG`.
func WithExample(command string) Option { return func(c *config) { c.example = command } }
