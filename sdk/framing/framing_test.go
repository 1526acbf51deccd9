package framing

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"strings"
	"testing"
	"unicode/utf8"

	"github.com/symposium-dev/symposium-pm/sdk/jsonscan"
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

// TestReaderLimitExcludesTerminator: the limit bounds the message without
// its line terminator (docs/protocol.md §2.2), so a message of exactly the
// limit is read whether a LF or a CR LF ends it, also when the CR is the
// last byte of the reader's buffer; one byte more is refused, its size
// counted without the CR.
func TestReaderLimitExcludesTerminator(t *testing.T) {
	const bufSize = 64 << 10 // NewReader's buffer
	for _, max := range []int{40, bufSize - 1, bufSize} {
		msg := strings.Repeat("x", max)
		in := msg + "\r\n" + msg + "\n" + msg + "y\r\n" + msg + "y\n" + msg + "\r"
		r := NewReader(strings.NewReader(in), max)
		var got []string
		for {
			line, err := r.Next()
			var tl *TooLongError
			if errors.As(err, &tl) {
				got = append(got, fmt.Sprintf("TOOLONG:%d", tl.Size))
				continue
			}
			if err == io.EOF {
				break
			}
			if err != nil {
				t.Fatal(err)
			}
			got = append(got, fmt.Sprint(len(line)))
		}
		want := fmt.Sprintf("%d|%d|TOOLONG:%d|TOOLONG:%d|%d", max, max, max+1, max+1, max)
		if g := strings.Join(got, "|"); g != want {
			t.Errorf("limit %d: read %s, want %s", max, g, want)
		}
	}
}

func TestFindID(t *testing.T) {
	pad := strings.Repeat("x", headSize)
	for msg, want := range map[string]string{
		`{"jsonrpc":"2.0","id":12,"result":1}`:      "12",
		`{"jsonrpc":"2.0","id":"a\"b","result":1}`:  `"a\"b"`,
		`{"jsonrpc":"2.0","id":null,"error":{}}`:    "null",
		`{"jsonrpc":"2.0","method":"x"}`:            "",
		`{"jsonrpc":"2.0","id": -3.5e2,"result":1}`: "-3.5e2",
		`{"jsonrpc":"2.0","id":"unterminated...`:    "",
		` { "\u0069d" : 4 }`:                        "4",
		`{"id":{"n":1},"x":1}`:                      "",
		`{"id":[1],"x":1}`:                          "",
		`{"id":true,"x":1}`:                         "",
		`{}`:                                        "",
		`[{"id":1}]`:                                "",
		`{"id":1`:                                   "", // 1 may go on: 12, 1.5
		`{"id":1}`:                                  "1",
		// An "id" nested in another member is not the message's.
		`{"method":"initialize","params":{"env":{"id":"7"}},"id":1}`:    "1",
		`{"method":"x","params":[{"id":"7"},"]}\"{"],"id":1}`:           "1",
		`{"method":"x","params":{"id":"7","PAD":"` + pad + `"},"id":1}`: "",
		`{"params":"\"id\":3","id":2}`:                                  "2",
		// A malformed value is no id.
		`{"jsonrpc":"2.0","id":1.2.3,"method":"search"}`: "",
		`{"jsonrpc":"2.0","id":01,"method":"search"}`:    "",
		`{"jsonrpc":"2.0","id":"\x","method":"search"}`:  "",
		"{\"id\":\"\xff\",\"method\":\"search\"}":        "",
		// A value the head cuts is no id, however it begins.
		`{"method":"x","params":{},"id":"` + pad + `"}`: "",
		`{"` + pad[:headSize-13] + `":0,"id":12}`:       "",
		`{"` + pad[:headSize-14] + `":0,"id":12}`:       "12",
	} {
		if got := string(FindID([]byte(msg))); got != want {
			t.Errorf("FindID(%.80s) = %q, want %q", msg, got, want)
		}
	}
}

// FuzzFindID: for any JSON object, whole or cut anywhere, FindID finds its
// top-level "id" or nothing, never another value; and for an object within
// the head, it finds what encoding/json decodes there when that is a
// string (in valid UTF-8), a number or null.
func FuzzFindID(f *testing.F) {
	f.Add([]byte(`{"jsonrpc":"2.0","id":1,"method":"initialize","params":{"env":{"id":"7"}}}`), 40)
	f.Add([]byte(`{"method":"initialize","params":{"env":{"id":"7","PAD":"xxxx"}},"id":1}`), 60)
	f.Add([]byte(`{"jsonrpc":"2.0","id":"a\"b]}","result":[{"id":2}]}`), 10)
	f.Add([]byte(`{"\u0069d":-0.5e+3,"id":{"id":4}}`), 100)
	f.Add([]byte("{\"id\":\"\xff\"}"), 5)
	f.Fuzz(func(t *testing.T, msg []byte, cut int) {
		var obj map[string]json.RawMessage
		if json.Unmarshal(msg, &obj) != nil || obj == nil {
			return
		}
		ids := 0
		jsonscan.Members(msg, func(name string, _ json.RawMessage) {
			if name == "id" {
				ids++
			}
		})
		if ids > 1 {
			return // the first and the last differ: no single answer
		}
		var want json.RawMessage // an id in invalid UTF-8 cannot be echoed: none
		if v, ok := obj["id"]; ok && utf8.Valid(v) && (string(v) == "null" || v[0] == '"' || v[0] == '-' || v[0] >= '0' && v[0] <= '9') {
			want = v
		}
		if got := FindID(msg); len(msg) <= headSize && string(got) != string(want) {
			t.Fatalf("FindID(%s) = %s, want %s", msg, got, want)
		} else if got != nil && string(got) != string(want) {
			t.Fatalf("FindID(%s) = %s, not its id %s", msg, got, want)
		}
		if cut < 0 || cut > len(msg) {
			cut = len(msg) / 2
		}
		if got := FindID(msg[:cut]); got != nil && string(got) != string(want) {
			t.Fatalf("FindID(%s), cut from %s, = %s, not its id %s", msg[:cut], msg, got, want)
		}
	})
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
