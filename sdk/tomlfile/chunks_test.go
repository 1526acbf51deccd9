package tomlfile

import (
	"reflect"
	"strings"
	"testing"
)

type chunkElem struct {
	Name     string            `toml:"name"`
	Version  string            `toml:"version"`
	Deps     []chunkDep        `toml:"dependencies"`
	Optional map[string]string `toml:"optional"`
}

type chunkDep struct {
	Name string `toml:"name"`
}

type chunkRest struct {
	Version  int `toml:"version"`
	Metadata struct {
		LockVersion string `toml:"lock-version"`
	} `toml:"metadata"`
}

type chunkWhole struct {
	chunkRest
	Package []chunkElem `toml:"package"`
}

// wholeOf decodes data at once, as the callers fall back to.
func wholeOf(data []byte) (chunkWhole, error) {
	var w struct {
		Version  int `toml:"version"`
		Metadata struct {
			LockVersion string `toml:"lock-version"`
		} `toml:"metadata"`
		Package []chunkElem `toml:"package"`
	}
	err := Unmarshal("x.lock", data, &w)
	return chunkWhole{chunkRest: chunkRest{Version: w.Version, Metadata: w.Metadata}, Package: w.Package}, err
}

var chunkSeeds = []string{
	"version = 1\n\n[[package]]\nname = \"a\"\nversion = \"1\"\ndependencies = [{ name = \"b\" }]\n\n[package.optional]\nx = \"y\"\n\n[[package]]\nname = \"b\"\n\n[metadata]\nlock-version = \"2.1\"\n",
	"  [[package]]  # indented\n  name = \"a\"\n",
	"[[package]]\nname = \"\"\"\n[[package]]\nname = 'x'\n\"\"\"\n",
	"package = []\n[[package]]\nname = \"a\"\n",
	"[metadata]\n[package.optional]\n",
	"[[package]]\nname = \"a\"\n[[package]]\nname = \"a\"\nname = \"b\"\n",
	"version = 1\r\n[[package]]\r\nname = \"a\"\r\n",
	"[[package]]\n[[package.dependencies]]\nname = \"c\"\n",
	"",
}

// TestUnmarshalTables checks the documents a lockfile writer produces are
// decoded one table at a time, and the others left to the whole-document
// decoder.
func TestUnmarshalTables(t *testing.T) {
	for i, tc := range []struct {
		doc  string
		ok   bool
		want int
	}{
		{chunkSeeds[0], true, 2},
		{chunkSeeds[1], true, 1},
		{chunkSeeds[2], false, 0}, // a header inside a multi-line string
		{chunkSeeds[3], false, 0}, // package set outside its tables
		{chunkSeeds[4], false, 0}, // a sub-table with no table before it
		{chunkSeeds[5], false, 0}, // a duplicate key
		{chunkSeeds[6], true, 1},
		{chunkSeeds[7], true, 1},
	} {
		var rest chunkRest
		got, ok := UnmarshalTables[chunkElem]([]byte(tc.doc), "package", &rest)
		if ok != tc.ok || len(got) != tc.want {
			t.Errorf("doc %d: %d tables, %v; want %d, %v", i, len(got), ok, tc.want, tc.ok)
		}
		checkAgainstWhole(t, []byte(tc.doc))
	}
}

// checkAgainstWhole fails t when UnmarshalTables reads data and the
// whole-document decoder does not, or reads it differently.
func checkAgainstWhole(t *testing.T, data []byte) {
	t.Helper()
	var rest chunkRest
	tables, ok := UnmarshalTables[chunkElem](data, "package", &rest)
	if !ok {
		return
	}
	whole, err := wholeOf(data)
	if err != nil {
		t.Fatalf("read one table at a time, but the whole document does not decode: %v\n%q", err, data)
	}
	if !reflect.DeepEqual(rest, whole.chunkRest) || !reflect.DeepEqual(tables, whole.Package) && (len(tables) != 0 || len(whole.Package) != 0) {
		t.Fatalf("one table at a time: %+v %+v\nwhole: %+v\n%q", rest, tables, whole, data)
	}
}

func FuzzUnmarshalTables(f *testing.F) {
	for _, s := range chunkSeeds {
		f.Add([]byte(s))
	}
	f.Fuzz(func(t *testing.T, data []byte) { checkAgainstWhole(t, data) })
}

// TestUnmarshalTablesLongLine checks a line longer than the reader's
// buffer is read whole.
func TestUnmarshalTablesLongLine(t *testing.T) {
	long := strings.Repeat("x", 200<<10)
	doc := "version = 1\n[[package]]\nname = \"" + long + "\"\n[[package]]\nname = \"b\"\n"
	var rest chunkRest
	got, ok := UnmarshalTables[chunkElem]([]byte(doc), "package", &rest)
	if !ok || len(got) != 2 || got[0].Name != long || got[1].Name != "b" || rest.Version != 1 {
		t.Fatalf("%v, %d tables", ok, len(got))
	}
}

// TestReadTables: a document read a table at a time gives its tables; one
// that cannot be (here, a key that is not bare) is read again from the
// start and given whole.
func TestReadTables(t *testing.T) {
	type pkg struct {
		Name string `toml:"name"`
	}
	doc := "version = 1\n\n[[package]]\nname = \"a\"\n\n[[package]]\nname = \"b\"\n"
	var head struct {
		Version int `toml:"version"`
	}
	tables, whole, err := ReadTables[pkg](strings.NewReader(doc), "package", &head)
	if err != nil || whole != nil || len(tables) != 2 || tables[1].Name != "b" || head.Version != 1 {
		t.Errorf("streamed: tables %v, whole %q, head %+v, err %v", tables, whole, head, err)
	}
	tables, whole, err = ReadTables[pkg](strings.NewReader(doc), "pack age", &head)
	if err != nil || tables != nil || string(whole) != doc {
		t.Errorf("not streamable: tables %v, whole %q, err %v; want the whole document", tables, whole, err)
	}
}

// TestReadTablesFunc: each table reaches fn as it is decoded, in order,
// the same tables ReadTables collects; a document that cannot be read a
// table at a time is given whole, read again from the start.
func TestReadTablesFunc(t *testing.T) {
	for _, doc := range chunkSeeds {
		var head, head2 chunkRest
		want, wantWhole, wantErr := ReadTables[chunkElem](strings.NewReader(doc), "package", &head)
		var got []chunkElem
		whole, err := ReadTablesFunc(strings.NewReader(doc), "package", &head2, func(e chunkElem) { got = append(got, e) })
		if (err != nil) != (wantErr != nil) || string(whole) != string(wantWhole) {
			t.Errorf("%q: whole %q, err %v; ReadTables gave whole %q, err %v", doc, whole, err, wantWhole, wantErr)
			continue
		}
		if whole == nil && (!reflect.DeepEqual(got, want) && len(got)+len(want) > 0 || head2 != head) {
			t.Errorf("%q: tables %+v, head %+v; ReadTables gave %+v, %+v", doc, got, head2, want, head)
		}
	}
}
