package predicate

import (
	"context"
	"reflect"
	"strings"
	"testing"

	"github.com/symposium-dev/symposium-pm/sdk/protocol"
)

func TestParseAtom(t *testing.T) {
	tests := []struct {
		in        string
		want      Atom
		canonical string
	}{
		{"serde", Atom{Name: "serde"}, "serde"},
		{"  serde  ", Atom{Name: "serde"}, "serde"},
		{"*", Atom{Name: "*"}, "*"},
		{"serde>=1.0", Atom{"serde", ">=1.0"}, "serde>=1.0"},
		{"serde<=1.0", Atom{"serde", "<=1.0"}, "serde<=1.0"},
		{"regex<2.0", Atom{"regex", "<2.0"}, "regex<2.0"},
		{"regex>2.0", Atom{"regex", ">2.0"}, "regex>2.0"},
		{"tokio^1.40", Atom{"tokio", "^1.40"}, "tokio^1.40"},
		{"serde~1.2", Atom{"serde", "~1.2"}, "serde~1.2"},
		{"serde=1.0", Atom{"serde", "^1.0"}, "serde^1.0"},
		{"serde==1.0.219", Atom{"serde", "=1.0.219"}, "serde==1.0.219"},
		{"multi>=1.2,<2", Atom{"multi", ">=1.2,<2"}, "multi>=1.2,<2"},
		{"multi>=1.2,2.5", Atom{"multi", ">=1.2,^2.5"}, "multi>=1.2,^2.5"},
		{"crate_with-both", Atom{Name: "crate_with-both"}, "crate_with-both"},
		{"@types/node>=18", Atom{"@types/node", ">=18"}, "@types/node>=18"},
		{"zope.interface~=5.0", Atom{"zope.interface", "~=5.0"}, "zope.interface~=5.0"},
		{"requests!=2.30.0", Atom{"requests", "!=2.30.0"}, "requests!=2.30.0"},
		{"lodash^3||^4", Atom{"lodash", "^3||^4"}, "lodash^3||^4"},
	}
	for _, tt := range tests {
		got, err := ParseAtom(tt.in)
		if err != nil {
			t.Errorf("ParseAtom(%q): %v", tt.in, err)
			continue
		}
		if got != tt.want {
			t.Errorf("ParseAtom(%q) = %#v, want %#v", tt.in, got, tt.want)
		}
		if got.String() != tt.canonical {
			t.Errorf("ParseAtom(%q).String() = %q, want %q", tt.in, got.String(), tt.canonical)
		}
		again, err := ParseAtom(got.String())
		if err != nil || again != got {
			t.Errorf("%q does not round-trip: %#v %v", got.String(), again, err)
		}
	}
	errs := map[string]string{
		"":                "empty depends-on predicate",
		"serde, tokio":    `one depends-on string is one atom, write a list: ["serde", "tokio"]`,
		"serde >=1":       `an atom has no spaces, write "serde>=1"`,
		"serde>= 1":       `an atom has no spaces, write "serde>=1"`,
		"serde(1)":        "function-call syntax is not allowed in depends-on",
		"depends-on(x)":   "function-call syntax is not allowed in depends-on",
		"serde>=":         `missing version after ">="`,
		"serde!1":         `unexpected trailing input "!1" after the package name`,
		">=1":             "expected a package name",
		"serde>=banana":   "invalid version requirement",
		"serde>=1.0 junk": "an atom has no spaces",
	}
	for in, want := range errs {
		_, err := ParseAtom(in)
		if err == nil || !strings.Contains(err.Error(), want) {
			t.Errorf("ParseAtom(%q) error = %v, want %q", in, err, want)
		}
	}
}

func TestParsePredicateRoundTrip(t *testing.T) {
	tests := []struct{ in, canonical string }{
		{"depends-on(serde)", "depends-on(serde)"},
		{"depends-on( serde>=1.0 )", "depends-on(serde>=1.0)"},
		{"depends-on(*)", "depends-on(*)"},
		{"depends-on(serde=1.0)", "depends-on(serde^1.0)"},
		{"depends-on(serde==1.2.3)", "depends-on(serde==1.2.3)"},
		{"depends-on(x>=1.2,<2)", "depends-on(x>=1.2,<2)"},
		{"shell(test -f x)", "shell(test -f x)"},
		{"shell()", "shell()"},
		{"path_exists(.git)", "path_exists(.git)"},
		{"path_exists()", "path_exists()"},
		{"env(HOME)", "env(HOME)"},
		{"env( A = b )", "env(A= b)"},
		{"env(A=)", "env(A=)"},
		{"env(A=b=c)", "env(A=b=c)"},
		{"workspace-member()", "workspace-member()"},
		{"workspace-member(  )", "workspace-member()"},
		{"not(env(X))", "not(env(X))"},
		{"any(env(A),env(B))", "any(env(A), env(B))"},
		{"all(env(A), any(depends-on(a), depends-on(b>=1,<2)))", "all(env(A), any(depends-on(a), depends-on(b>=1,<2)))"},
		{"any(env(A), , env(B),)", "any(env(A), env(B))"},
		{"my_check(hello world)", "my_check(hello world)"},
		{"battery_pack(cli)", "battery_pack(cli)"},
		{"custom()", "custom()"},
		{` quoted("a b") `, `quoted("a b")`},
		{"shell(echo (hi))", "shell(echo (hi))"},
	}
	for _, tt := range tests {
		p, err := Parse(tt.in)
		if err != nil {
			t.Errorf("Parse(%q): %v", tt.in, err)
			continue
		}
		if p.String() != tt.canonical {
			t.Errorf("Parse(%q).String() = %q, want %q", tt.in, p.String(), tt.canonical)
		}
		again, err := Parse(p.String())
		if err != nil || !reflect.DeepEqual(again, p) {
			t.Errorf("%q does not round-trip: %#v %v", p.String(), again, err)
		}
	}
	errs := map[string]string{
		"serde":               "is not a function call",
		"*":                   "is not a function call",
		"tokio>=1":            "is not a function call",
		"env(X":               "must end with ')'",
		"crate(serde)":        "crate(...) was renamed; write depends-on(serde)",
		"not(crate(serde))":   "crate(...) was renamed",
		"workspace-member(x)": "takes no argument",
		"any()":               "any() needs at least one predicate",
		"all( , )":            "all() needs at least one predicate",
		"not()":               "not() needs a predicate",
		"env()":               "env() needs a variable name",
		"env(=x)":             "env() needs a variable name before '='",
		"battery-pack(cli)":   `"battery-pack" is not a valid predicate name`,
		"_x(y)":               `"_x" is not a valid predicate name`,
		"9lives(y)":           `"9lives" is not a valid predicate name`,
		"(x)":                 `"" is not a valid predicate name`,
		"depends-on()":        "empty depends-on predicate",
		"depends-on(a b)":     "an atom has no spaces",
		"any(env(A), serde)":  `"serde" is not a function call`,
	}
	for in, want := range errs {
		_, err := Parse(in)
		if err == nil || !strings.Contains(err.Error(), want) {
			t.Errorf("Parse(%q) error = %v, want %q", in, err, want)
		}
	}
}

func TestLower(t *testing.T) {
	if Lower(nil) != nil {
		t.Error("Lower(nil) != nil")
	}
	a, b := Atom{Name: "serde"}, Atom{Name: "tokio"}
	if got := Lower([]Atom{a}).String(); got != "depends-on(serde)" {
		t.Errorf("one atom: %s", got)
	}
	if got := Lower([]Atom{a, b}).String(); got != "any(depends-on(serde), depends-on(tokio))" {
		t.Errorf("two atoms: %s", got)
	}
}

func TestSplitTopLevel(t *testing.T) {
	got := SplitTopLevel(" a , any(b, c), , d(e(f, g)) ,")
	want := []string{"a", "any(b, c)", "d(e(f, g))"}
	if !reflect.DeepEqual(got, want) {
		t.Errorf("got %q", got)
	}
}

func TestDepsMatchAtom(t *testing.T) {
	deps := Deps{
		{PM: "cargo", Name: "serde", Version: "1.0.219"},
		{PM: "cargo", Name: "tokio", Version: "1.41.0-beta.1"},
		{PM: "cargo", Name: "unresolved", Version: "*"},
		{PM: "npm", Name: "lodash", Version: "4.17.21"},
		{PM: "npm", Name: "@types/node", Version: "20.11.5"},
		{PM: "pypi", Name: "requests", Version: "2.31.0"},
		{PM: "pypi", Name: "django", Version: "5.0.1"},
		{PM: "gitregistry", Name: "odd", Version: "1.2.3"},
	}
	tests := []struct {
		atom string
		want bool
	}{
		{"*", true},
		{"serde", true},
		{"serde>=1.0", true},
		{"serde=1.0", true}, // caret
		{"serde==1.0.219", true},
		{"serde==1.0.218", false},
		{"serde<1", false},
		{"serde~1.0", true},
		{"serde>=1.0,<1.0.200", false},
		{"serde_json", false},
		{"Serde", false},
		{"tokio>=1.40", false}, // cargo: pre-release needs a pre-release comparator
		{"tokio", true},
		{"unresolved", true},
		{"unresolved>=1", false},
		{"lodash^4.17", true},
		{"lodash>=4,<5", true},  // comma becomes npm's space (AND)
		{"lodash>=5,<6", false}, //
		{"@types/node>=18", true},
		{"requests>=2.31,<3", true},
		{"requests~=2.30", true},  // PEP 440 text kept verbatim
		{"requests=2.31.0", true}, // caret → >=2.31.0,<3
		{"requests==2.31.0", true},
		{"requests==2.30.0", false},
		{"requests!=2.31.0", false},
		{"requests!=2.30.0", true},
		{"lodash^3||^4", true},
		{"django^4", false},
		{"django~5.0", true},
		{"odd>=1", true}, // unknown PM: Cargo semantics
		{"missing", false},
	}
	for _, tt := range tests {
		a, err := ParseAtom(tt.atom)
		if err != nil {
			t.Fatalf("%s: %v", tt.atom, err)
		}
		if got := deps.MatchAtom(a); got != tt.want {
			t.Errorf("MatchAtom(%s) = %v, want %v", tt.atom, got, tt.want)
		}
	}
	if !(Deps{}).MatchAtom(Atom{Name: "*"}) {
		t.Error("wildcard must match with no deps")
	}
}

func TestReqFor(t *testing.T) {
	tests := []struct{ eco, in, want string }{
		{"cargo", ">=1,<2", ">=1,<2"},
		{"npm", ">=1,<2", ">=1 <2"},
		{"npm", "^1 || ^2", "^1 || ^2"},
		{"pypi", "=1.2.3", "==1.2.3"},
		{"pypi", "^1.2.3", ">=1.2.3,<2"},
		{"pypi", "^0.2.3", ">=0.2.3,<0.3"},
		{"pypi", "^0.0.3", ">=0.0.3,<0.0.4"},
		{"pypi", "^0", ">=0,<1"},
		{"pypi", "~1.2.3", ">=1.2.3,<1.3"},
		{"pypi", "~1", ">=1,<2"},
		{"pypi", "~=1.4", "~=1.4"},
		{"pypi", ">=1,<2", ">=1,<2"},
	}
	for _, tt := range tests {
		if got := ReqFor(tt.eco, tt.in); got != tt.want {
			t.Errorf("ReqFor(%s, %q) = %q, want %q", tt.eco, tt.in, got, tt.want)
		}
	}
}

func TestEvaluator(t *testing.T) {
	ctx := context.Background()
	dir := t.TempDir()
	env := map[string]string{"SET": "", "MODE": "a=b", "PATH": "/usr/bin:/bin"}
	e := &Evaluator{
		Deps:      Deps{{PM: "cargo", Name: "serde", Version: "1.0.0"}},
		Dir:       dir,
		LookupEnv: func(k string) (string, bool) { v, ok := env[k]; return v, ok },
		Custom:    func(_ context.Context, name, arg string) bool { return name == "yes" && arg == "x" },
		Shell:     func(_ context.Context, cmd string) bool { return cmd == "true" || cmd == "test -d ." },
	}
	tests := []struct {
		pred string
		want bool
	}{
		{"depends-on(serde)", true},
		{"depends-on(tokio)", false},
		{"depends-on(*)", true},
		{"env(SET)", true},
		{"env(SET=)", true},
		{"env(UNSET)", false},
		{"env(MODE=a=b)", true},
		{"env(MODE=a)", false},
		{"workspace-member()", false},
		{"not(env(UNSET))", true},
		{"any(env(UNSET), depends-on(serde))", true},
		{"all(env(SET), depends-on(tokio))", false},
		{"yes(x)", true},
		{"yes(y)", false},
		{"unknown_pred(x)", false},
		{"path_exists()", false},
		{"path_exists(.)", true},
		{"path_exists(sh)", true}, // found on PATH
		{"path_exists(./sh)", false},
		{"path_exists(no-such-file)", false},
		{"shell(true)", true},
		{"shell(exit 3)", false},
		{"shell(test -d .)", true},
	}
	for _, tt := range tests {
		p, err := Parse(tt.pred)
		if err != nil {
			t.Fatal(err)
		}
		if got := e.Eval(ctx, p); got != tt.want {
			t.Errorf("Eval(%s) = %v, want %v", tt.pred, got, tt.want)
		}
	}
	if !e.Holds(ctx, nil) {
		t.Error("empty gate must hold")
	}
	e.WorkspaceMember = true
	if !e.Eval(ctx, WorkspaceMember{}) {
		t.Error("workspace-member() with provenance flag")
	}
	var none Evaluator
	if none.Eval(ctx, DependsOn{Atom: Atom{Name: "serde"}}) || !none.Eval(ctx, DependsOn{Atom: Atom{Name: "*"}}) {
		t.Error("nil deps")
	}
	// Without a Shell hook the package runs nothing: shell() is false.
	if none.Eval(ctx, Shell{Command: "true"}) {
		t.Error("shell() held with no Shell hook")
	}
	_ = protocol.AnyVersion
}

// TestNestingBounded: predicates nest at most MaxNesting deep; deeper text
// (20,000 levels of any(...), which parsed in time quadratic in its length)
// is refused with a message saying so, by Parse and ParseList alike.
func TestNestingBounded(t *testing.T) {
	nest := func(n int) string {
		return strings.Repeat("any(", n) + "env(X)" + strings.Repeat(")", n)
	}
	if _, err := Parse(nest(MaxNesting - 1)); err != nil {
		t.Errorf("%d levels: %v", MaxNesting, err)
	}
	for _, s := range []string{nest(MaxNesting), nest(20000)} {
		if _, err := Parse(s); err == nil || !strings.Contains(err.Error(), "nest deeper") {
			t.Errorf("Parse of %d bytes nested too deep: %v", len(s), err)
		}
		if _, err := ParseList("env(A), " + s); err == nil || !strings.Contains(err.Error(), "nest deeper") {
			t.Errorf("ParseList of %d bytes nested too deep: %v", len(s), err)
		}
	}
}
