// Package predicate is the predicate language of Symposium plugin manifests
// and its evaluation.
//
// It provides dependency atoms ([ParseAtom]: a package name with an optional
// version requirement, or `*`), function-call predicates ([Parse],
// [ParseList]: depends-on, shell, path_exists, env, workspace-member, not,
// any, all and custom predicates) with a canonical string form that parses
// back to the same value, the lowering of a `depends-on` list into one
// predicate ([Lower]), and evaluation ([Evaluator]) with each ecosystem's
// version semantics for dependency atoms ([Deps], [ReqFor]).
//
// The package runs no command: [Evaluator] calls its Shell hook for shell()
// predicates, and the host, which decides what runs, supplies it. A PM that
// only validates manifests therefore does not link a command runner through
// this package.
//
// Differences from Symposium: atom names may also contain '.', '@' and '/'
// so npm and PyPI names can be written; the operator `!=` is accepted for
// PEP 440; a requirement Cargo rejects is accepted when npm's or PEP 440's
// syntax accepts it. A multi-comparator requirement is rendered without the
// space semver puts after the comma (`>=1.2,<2`) and an exact requirement as
// `==1.2.3`.
package predicate
