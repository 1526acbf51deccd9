package pmserver

import (
	"bytes"
	"hash/crc32"
	"testing"
)

// FuzzVetStream: any region, with its checksum right or wrong, is either
// refused or written exactly as it is between the head and the tail, on
// one line; a region is accepted only when its checksum holds and it is
// framed as one JSON array.
func FuzzVetStream(f *testing.F) {
	f.Add([]byte(`[{"id":1}]`), false)
	f.Add([]byte("[1,\n2]"), false)
	f.Add([]byte(`[]`), true)
	f.Add(bytes.Repeat([]byte(`[`), 70000), false)
	f.Fuzz(func(t *testing.T, region []byte, wrongSum bool) {
		sum := crc32.Checksum(region, castagnoli())
		if wrongSum {
			sum++
		}
		file := append(append([]byte("x\n"), region...), '\n')
		st, err := vetStream(VettedStream{From: bytes.NewReader(file), Offset: 2, Length: int64(len(region)), Sum: sum})
		framedOK := len(region) >= 2 && region[0] == '[' && region[len(region)-1] == ']' && bytes.IndexByte(region, '\n') < 0
		if (err == nil) != (framedOK && !wrongSum) {
			t.Fatalf("%q (wrong sum %v): vetStream %v", region, wrongSum, err)
		}
		if err != nil {
			return
		}
		var out bytes.Buffer
		if err := writeStream(&out, []byte("{"), st, []byte("}\n")); err != nil {
			t.Fatal(err)
		}
		if want := "{" + string(region) + "}\n"; out.String() != want {
			t.Fatalf("wrote %q, want %q", out.String(), want)
		}
	})
}
