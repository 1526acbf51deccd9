package packagejson

import (
	"bytes"
	"encoding/json"
	"fmt"
	"os/exec"
	"slices"
	"strings"
	"testing"
)

// summary is what Parse reads from a package.json, in one line.
func summary(name, version string, deps []Dep, ws []string, sym json.RawMessage) string {
	var ds []string
	for _, d := range deps {
		ds = append(ds, fmt.Sprintf("%s:%s=%s", d.Kind, d.Name, d.Spec))
	}
	slices.Sort(ds)
	s := "none"
	if len(sym) > 0 {
		var v any
		if json.Unmarshal(sym, &v) != nil {
			s = "invalid"
		} else {
			b, _ := json.Marshal(v) // map keys sorted: the same text for the same object
			s = string(b)
		}
	}
	return fmt.Sprintf("name=%q version=%q deps=%q workspaces=%q symposium=%s", name, version, ds, ws, s)
}

// parseJS reads package.json documents as npm does, with JSON.parse, and
// keeps what Parse keeps: string name and version, the string (or null)
// specs of the four dependency objects under non-empty names, the
// workspace patterns of either form, the "symposium" value unless null.
const parseJS = `
const docs = JSON.parse(require("fs").readFileSync(0, "utf8"));
const isObj = v => v !== null && typeof v === "object" && !Array.isArray(v);
const str = v => typeof v === "string" ? v : "";
console.log(JSON.stringify(docs.map(text => {
  const p = JSON.parse(text);
  const deps = [];
  for (const kind of ["dependencies", "devDependencies", "optionalDependencies", "peerDependencies"]) {
    const t = p[kind];
    if (!isObj(t)) continue;
    for (const [n, spec] of Object.entries(t)) {
      if (n !== "" && (typeof spec === "string" || spec === null)) deps.push([kind, n, spec ?? ""]);
    }
  }
  let ws = p.workspaces;
  if (isObj(ws)) ws = ws.packages;
  ws = Array.isArray(ws) ? ws.filter(w => typeof w === "string" && w !== "") : [];
  const sym = p.symposium === undefined || p.symposium === null ? null : p.symposium;
  return {name: str(p.name), version: str(p.version), deps, ws, sym};
})));
`

// TestParseObjectsAsJSONParse: package.json is read as npm and Node read
// it, with JSON.parse: "Name", "Version", "Dependencies", "Workspaces",
// "Symposium" (and names encoding/json folds to a field's, such as "ſ" for
// "s" or the Kelvin sign for "k") are other members; a repeated name's
// last value wins; escaped names are their decoding. With node on PATH,
// each document is also read by JSON.parse and must give the same.
func TestParseObjectsAsJSONParse(t *testing.T) {
	cases := []struct{ doc, want string }{
		{`{"name":"a","Name":"b"}`, `name="a" version="" deps=[] workspaces=[] symposium=none`},
		{`{"Name":"b","NAME":"c"}`, `name="" version="" deps=[] workspaces=[] symposium=none`},
		{`{"name":"a","version":"1.0.0","Version":"9.9.9"}`, `name="a" version="1.0.0" deps=[] workspaces=[] symposium=none`},
		{`{"dependencies":{"x":"^1"},"Dependencies":{"y":"^2"}}`, `name="" version="" deps=["dependencies:x=^1"] workspaces=[] symposium=none`},
		{`{"Dependencies":{"y":"^2"},"DevDependencies":{"z":"1"},"devdependencies":{"w":"1"},"PeerDependencies":{"p":"1"},"optionaldependencies":{"o":"1"}}`, `name="" version="" deps=[] workspaces=[] symposium=none`},
		{`{"dependencies":{"x":"^1"},"dependencies":{"y":"^2"}}`, `name="" version="" deps=["dependencies:y=^2"] workspaces=[] symposium=none`},
		{`{"workspaces":["a/*"],"Workspaces":["b/*"]}`, `name="" version="" deps=[] workspaces=["a/*"] symposium=none`},
		{`{"Workspaces":["b/*"]}`, `name="" version="" deps=[] workspaces=[] symposium=none`},
		{`{"workspaces":{"packages":["a/*"],"Packages":["b/*"]}}`, `name="" version="" deps=[] workspaces=["a/*"] symposium=none`},
		{`{"workspaces":{"Packages":["b/*"]}}`, `name="" version="" deps=[] workspaces=[] symposium=none`},
		{`{"workspaces":{"packages":["a/*"],"packages":["c/*"]}}`, `name="" version="" deps=[] workspaces=["c/*"] symposium=none`},
		{`{"symposium":{"skills":"x"},"Symposium":{"skills":"y"}}`, `name="" version="" deps=[] workspaces=[] symposium={"skills":"x"}`},
		{`{"Symposium":{"skills":"y"}}`, `name="" version="" deps=[] workspaces=[] symposium=none`},
		{`{"symposium":{"a":1},"symposium":null}`, `name="" version="" deps=[] workspaces=[] symposium=none`},
		{`{"ſymposium":{"a":1},"worKspaces":["k/*"],"devDependencieſ":{"s":"1"}}`, `name="" version="" deps=[] workspaces=[] symposium=none`},
		{`{"\u006eame":"esc","dep\u0065ndencies":{"\u0078":"1"}}`, `name="esc" version="" deps=["dependencies:x=1"] workspaces=[] symposium=none`},
		{`{"name":"a","name":null,"version":"1.0.0","version":2}`, `name="" version="" deps=[] workspaces=[] symposium=none`},
	}
	docs := make([]string, len(cases))
	for i, c := range cases {
		docs[i] = c.doc
	}
	node := nodeParse(t, docs)
	for i, c := range cases {
		m, err := Parse([]byte(c.doc))
		if err != nil {
			t.Fatalf("%s: %v", c.doc, err)
		}
		got := summary(m.Name, m.Version, m.Deps, m.Workspaces, m.Symposium)
		if got != c.want {
			t.Errorf("%s:\n got  %s\n want %s", c.doc, got, c.want)
		}
		if node != nil && node[i] != c.want {
			t.Errorf("%s:\n JSON.parse reads %s\n the test wants   %s", c.doc, node[i], c.want)
		}
	}
}

// nodeParse is parseJS's summary of each document, or nil without node.
func nodeParse(t *testing.T, docs []string) []string {
	t.Helper()
	if _, err := exec.LookPath("node"); err != nil {
		t.Log("node not installed: documents not read with JSON.parse")
		return nil
	}
	in, _ := json.Marshal(docs)
	cmd := exec.Command("node", "-e", parseJS)
	cmd.Stdin = strings.NewReader(string(in))
	out, err := cmd.Output()
	if err != nil {
		t.Fatal("node:", err)
	}
	var res []struct {
		Name    string          `json:"name"`
		Version string          `json:"version"`
		Deps    [][3]string     `json:"deps"`
		WS      []string        `json:"ws"`
		Sym     json.RawMessage `json:"sym"`
	}
	if err := json.Unmarshal(out, &res); err != nil {
		t.Fatalf("node: %v\n%s", err, out)
	}
	sums := make([]string, len(res))
	for i, r := range res {
		var deps []Dep
		for _, d := range r.Deps {
			deps = append(deps, Dep{Name: d[1], Spec: d[2], Kind: Kind(d[0])})
		}
		if string(r.Sym) == "null" {
			r.Sym = nil
		}
		sums[i] = summary(r.Name, r.Version, deps, r.WS, r.Sym)
	}
	return sums
}

// parseReference is Parse as documented, built on encoding/json's
// decoding into maps of raw values, which keeps exact names and a
// repeated name's last value: ok is false where Parse must fail.
func parseReference(data []byte) (string, bool) {
	var top map[string]json.RawMessage
	if json.Unmarshal(bytes.TrimPrefix(data, []byte("\uFEFF")), &top) != nil {
		return "", false
	}
	var deps []Dep
	for _, k := range Kinds {
		for n, spec := range strMapStd(top[string(k)]) {
			deps = append(deps, Dep{Name: n, Spec: spec, Kind: k})
		}
	}
	var ws []string
	list := top["workspaces"]
	var obj map[string]json.RawMessage
	if json.Unmarshal(list, &obj) == nil && obj != nil {
		list = obj["packages"]
	}
	var elems []json.RawMessage
	if json.Unmarshal(list, &elems) == nil {
		for _, e := range elems {
			if s := str(e); s != "" {
				ws = append(ws, s)
			}
		}
	}
	sym := top["symposium"]
	if string(sym) == "null" {
		sym = nil
	}
	return summary(str(top["name"]), str(top["version"]), deps, ws, sym), true
}

// FuzzParseMatchesReference holds Parse to parseReference.
func FuzzParseMatchesReference(f *testing.F) {
	for _, s := range []string{`{"name":"a","Name":"b","dependencies":{"x":"1"},"Dependencies":{"y":"2"},"workspaces":{"packages":["a"],"Packages":["b"]}}`,
		`{"\u006eame":"n","symposium":{"a":1},"symposium":null,"Symposium":{}}`, `null`, `[]`, "\uFEFF{\"version\":\"1\"}", `{"workspaces":["a",1,""]}`} {
		f.Add([]byte(s))
	}
	f.Fuzz(func(t *testing.T, data []byte) {
		want, ok := parseReference(data)
		m, err := Parse(data)
		if (err == nil) != ok {
			t.Fatalf("Parse(%q) = %v, the reference ok=%v", data, err, ok)
		}
		if err != nil {
			return
		}
		if got := summary(m.Name, m.Version, m.Deps, m.Workspaces, m.Symposium); got != want {
			t.Fatalf("Parse(%q):\n got       %s\n reference %s", data, got, want)
		}
	})
}
