package framing

import (
	"bytes"
	"errors"
	"io"
	"strings"
	"testing"
)

func TestReader(t *testing.T) {
	in := "a\n\n  \r\nbb\r\n" + strings.Repeat("x", 50) + "\n" + `{"id":7,"x":"` + strings.Repeat("y", 60) + "\"}\nlast"
	r := NewReader(strings.NewReader(in), 40)
	var got []string
	for {
		line, err := r.Next()
		var tl *TooLongError
		if errors.As(err, &tl) {
			got = append(got, "TOOLONG:"+string(tl.ID()))
			continue
		}
		if err == io.EOF {
			break
		}
		if err != nil {
			t.Fatal(err)
		}
		got = append(got, string(line))
		if string(line) == "last" && !r.Unterminated() {
			t.Error("the last line had no newline, but Unterminated is false")
		}
		if string(line) == "a" && r.Unterminated() {
			t.Error("line a ended with a newline, but Unterminated is true")
		}
	}
	want := []string{"a", "bb", "TOOLONG:", "TOOLONG:7", "last"}
	if strings.Join(got, "|") != strings.Join(want, "|") {
		t.Errorf("got %q, want %q", got, want)
	}
}

func TestFindID(t *testing.T) {
	for msg, want := range map[string]string{
		`{"jsonrpc":"2.0","id":12,"result":1}`:      "12",
		`{"jsonrpc":"2.0","id":"a\"b","result":1}`:  `"a\"b"`,
		`{"jsonrpc":"2.0","id":null,"error":{}}`:    "null",
		`{"jsonrpc":"2.0","method":"x"}`:            "",
		`{"jsonrpc":"2.0","id": -3.5e2,"result":1}`: "-3.5e2",
		`{"jsonrpc":"2.0","id":"unterminated...`:    "",
	} {
		if got := string(FindID([]byte(msg))); got != want {
			t.Errorf("FindID(%s) = %q, want %q", msg, got, want)
		}
	}
}

// FuzzMessages feeds arbitrary input to the reader and the envelope decoder:
// no panic, every line within the bound, and lines never contain a newline.
func FuzzMessages(f *testing.F) {
	f.Add([]byte(`{"jsonrpc":"2.0","id":1,"method":"initialize","params":{"protocol_version":1}}` + "\n"))
	f.Add([]byte(`[{"jsonrpc":"2.0","id":1,"method":"a"},{"jsonrpc":"2.0","method":"b"}]` + "\n"))
	f.Add([]byte("garbage\n\n\r\n{\"id\":\"x\"\n"))
	f.Add([]byte(`{"id":` + strings.Repeat("9", 300) + `}`))
	f.Fuzz(func(t *testing.T, data []byte) {
		r := NewReader(bytes.NewReader(data), 128)
		for range 1000 {
			line, err := r.Next()
			var tl *TooLongError
			if errors.As(err, &tl) {
				if tl.Size <= 128 {
					t.Fatalf("TooLongError for %d bytes", tl.Size)
				}
				FindID(tl.Head)
				continue
			}
			if err != nil {
				return
			}
			if len(line) > 128 || bytes.ContainsRune(line, '\n') {
				t.Fatalf("bad line %q", line)
			}
			for _, e := range Envelopes(line) {
				e.IsCall()
				IDKey(e.ID)
			}
			FindID(line)
		}
	})
}
