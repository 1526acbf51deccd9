package jsonscan

import (
	"encoding/json"
	"strings"
	"testing"
)

// validSeeds are documents on both sides of json.Valid's line.
var validSeeds = []string{
	``, ` `, `{}`, `[]`, ` { } `, `[ ]`, `null`, `true`, `false`, `nul`, `truex`, `0`, `-0`, `01`, `-`, `1.`, `1.5`, `.5`, `1e5`, `1E+5`, `1e-`, `1e`,
	`-1.25e-10`, `"a"`, `"\u00e9\n\"\\\/\b\f\r\t"`, `"\u00g0"`, `"\x"`, "\"a\tb\"", "\"\xff\"", `"`, `"\`, `"\u12"`,
	`{"a":1,"b":[true,false,null,{"c":"d"}]}`, `{"a" : 1 , "b" : [ ] }`, `{"a":1,}`, `[1,]`, `[,1]`, `{,}`, `{"a"}`, `{"a":}`, `{1:2}`,
	`[1 2]`, `{"a":1 "b":2}`, `[}`, `{]`, `[[[]]]`, `[[[]]`, `1 2`, "\t[1]\r\n", `[1]x`, `{"a":{"b":{"c":[1,{"d":[]}]}}}`,
}

// FuzzValid holds Valid to json.Valid.
func FuzzValid(f *testing.F) {
	for _, s := range validSeeds {
		f.Add([]byte(s))
	}
	f.Fuzz(func(t *testing.T, data []byte) {
		if got, want := Valid(data), json.Valid(data); got != want {
			t.Fatalf("Valid(%q) = %v; json.Valid says %v", data, got, want)
		}
	})
}

// TestValid: the seeds, and nesting at and past encoding/json's limit.
func TestValid(t *testing.T) {
	for _, s := range validSeeds {
		if got, want := Valid([]byte(s)), json.Valid([]byte(s)); got != want {
			t.Errorf("Valid(%q) = %v; json.Valid says %v", s, got, want)
		}
	}
	for _, depth := range []int{maxNesting - 1, maxNesting, maxNesting + 1} {
		for _, doc := range []string{strings.Repeat("[", depth) + strings.Repeat("]", depth), strings.Repeat(`{"a":`, depth) + "1" + strings.Repeat("}", depth)} {
			if got, want := Valid([]byte(doc)), json.Valid([]byte(doc)); got != want {
				t.Errorf("Valid at depth %d (%.10s…) = %v; json.Valid says %v", depth, doc, got, want)
			}
		}
	}
}

// BenchmarkValid measures Valid against json.Valid on an answer of 400
// offers.
func BenchmarkValid(b *testing.B) {
	var sb strings.Builder
	sb.WriteByte('[')
	for i := range 400 {
		if i > 0 {
			sb.WriteByte(',')
		}
		sb.WriteString(`{"id":{"pm":"npm","name":"pkg-0001","version":"1.0.0"},"root":"/home/user/project/node_modules/pkg-0001","manifest":{"name":"pkg-0001","skills":[{"source":{"path":"skills"}}],"n":-1.5e3,"t":true}}`)
	}
	sb.WriteByte(']')
	data := []byte(sb.String())
	for name, valid := range map[string]func([]byte) bool{"jsonscan": Valid, "encoding-json": json.Valid} {
		b.Run(name, func(b *testing.B) {
			b.SetBytes(int64(len(data)))
			for b.Loop() {
				if !valid(data) {
					b.Fatal("invalid")
				}
			}
		})
	}
}
