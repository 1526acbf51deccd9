package pmserver

import (
	"bytes"
	"encoding/json"
	"fmt"
	"slices"
	"testing"
	"unicode/utf8"
)

// FuzzAdmit: whatever a line holds, admission never panics, answers only
// with valid UTF-8 JSON, and forwards only requests jrpc2 accepts whole.
func FuzzAdmit(f *testing.F) {
	for _, s := range []string{
		`{"jsonrpc":"2.0","id":1,"method":"list_deps"}`,
		`{"jsonrpc":"1.0","id":2,"method":"list_deps"}`,
		`{"jsonrpc":"2.0","id":80,"method":5}`,
		`[{"jsonrpc":"2.0","id":1,"method":"initialize"},{"jsonrpc":"2.0","method":"x"}]`,
		"{\"id\":\"\xff\"}",
		`[]`, `7`, `{"jsonrpc":"2.0","method":"x","params":3}`, `not json`,
	} {
		f.Add([]byte(s))
	}
	f.Fuzz(func(t *testing.T, line []byte) {
		v := admit(line)
		switch {
		case v.answer != nil:
			if !utf8.Valid(v.answer) || !json.Valid(v.answer) {
				t.Fatalf("answer %q is not valid UTF-8 JSON", v.answer)
			}
		case v.forward:
			var m map[string]json.RawMessage
			if json.Unmarshal(line, &m) != nil || len(v.id) == 0 || v.method == "" {
				t.Fatalf("forwarded %q with id %q method %q", line, v.id, v.method)
			}
		case v.note == "":
			t.Fatalf("%q: neither answered, forwarded nor noted", line)
		}
	})
}

// checkRequestByMap is checkRequest as it was before it read members in
// place: the object decoded into a map. It is the oracle
// FuzzCheckRequestInPlace holds checkRequest to.
func checkRequestByMap(raw json.RawMessage) checked {
	var obj map[string]json.RawMessage
	if err := json.Unmarshal(raw, &obj); err != nil || obj == nil {
		return checked{problem: fmt.Sprintf("a request is a JSON object, not %s", kind(raw))}
	}
	var c checked
	if id, ok := obj["id"]; ok {
		switch k := kind(id); k {
		case "a string", "a number":
			c.id = id
		default:
			c.problem = fmt.Sprintf(`"id" must be a string or a number, not %s`, k)
			return c
		}
	}
	v, ok := obj["jsonrpc"]
	var version string
	switch {
	case !ok:
		c.problem = `the request has no "jsonrpc" member; it must be "2.0"`
		return c
	case json.Unmarshal(v, &version) != nil || version != "2.0":
		c.problem = fmt.Sprintf(`"jsonrpc" must be "2.0", not %s`, show(v))
		return c
	}
	m, ok := obj["method"]
	switch {
	case !ok:
		c.problem = `the request has no "method" member`
		return c
	case json.Unmarshal(m, &c.method) != nil:
		c.problem = fmt.Sprintf(`"method" must be a string, not %s`, kind(m))
		return c
	case c.method == "":
		c.problem = `"method" is empty`
		return c
	}
	c.rawMethod = m
	if p, ok := obj["params"]; ok {
		switch k := kind(p); k {
		case "an object", "an array":
			c.params = p
		case "null":
		default:
			c.problem = fmt.Sprintf(`"params" must be an object or an array, not %s`, k)
			return c
		}
	}
	var extra []string
	for k := range obj {
		if !slices.Contains(requestMembers, k) {
			extra = append(extra, k)
		}
	}
	if len(extra) > 0 {
		slices.Sort(extra)
		c.problem = fmt.Sprintf("unknown member %q in the request (a request has only jsonrpc, id, method and params)", extra[0])
	}
	return c
}

// checkRequestSeeds are requests whose members are hard to find in place:
// duplicates, escaped names, strings holding brackets and quotes, spacing.
var checkRequestSeeds = []string{
	`{"jsonrpc":"2.0","id":1,"method":"list_deps"}`,
	`{"jsonrpc":"2.0","id":"a\"}b","method":"active_plugins","params":{"deps":[{"pm":"npm","name":"x]}","version":"1"}]}}`,
	` { "jsonrpc" : "2.0" , "id" : -1.5e3 , "method" : "fetch" , "params" : [ 1 , { } , "\\" ] } `,
	"{\"jsonrpc\":\"2.0\",\n\"id\":2,\t\"method\":\"x\",\r\"params\":null}",
	`{"jsonrpc":"2.0","id":1,"method":"a","method":"b","params":{"x":1},"params":[2]}`,
	`{"jsonrpc":"2.0","id":1,"id":{},"method":"a"}`,
	`{"jsonrpc":"2.0","id":1,"m\u0065thod":"a","p\u0061rams":{"k":"v"}}`,
	`{"jsonrpc":"2.0","id":1,"method":"a","zeta":1,"alpha":2,"\u00e9":3}`,
	`{"jsonrpc":"2.0","id":1,"method":"\u0061\u0062","params":"s"}`,
	`{"jsonrpc":"2.0","id":null,"method":"a"}`,
	`{"jsonrpc":"2.0","method":"a"}`,
	`{"jsonrpc":2,"id":1,"method":"a"}`,
	`{"jsonrpc":"2.0","id":true,"method":"a"}`,
	`{"jsonrpc":"2.0","id":1,"method":""}`,
	`{"jsonrpc":"2.0","id":1,"method":7}`,
	`{"jsonrpc":"2.0","id":1,"method":"a","params":true}`,
	`{"jsonrpc":"2.0","id":1,"method":"a","params":[[[{"a":["]"]}]]]}`,
	`{}`, `null`, `[]`, `"s"`, `12`, `{"":1}`, `{"id":1}`,
}

// FuzzCheckRequestInPlace: for every valid JSON value, checkRequest reads
// the same id, method, params and problem as decoding the object into a
// map does, and params are exactly as written.
func FuzzCheckRequestInPlace(f *testing.F) {
	for _, s := range checkRequestSeeds {
		f.Add([]byte(s))
	}
	f.Fuzz(func(t *testing.T, raw []byte) {
		if !json.Valid(raw) {
			return
		}
		got, want := checkRequest(raw), checkRequestByMap(raw)
		if !bytes.Equal(got.id, want.id) || got.method != want.method || got.problem != want.problem ||
			!bytes.Equal(got.rawMethod, want.rawMethod) || !bytes.Equal(got.params, want.params) ||
			(got.params == nil) != (want.params == nil) {
			t.Fatalf("%s:\n got %+v\nwant %+v", raw, got, want)
		}
	})
}

// TestCheckRequestSeeds runs the seeds of FuzzCheckRequestInPlace with the
// answers spelled out for a few, so that the oracle itself is checked.
func TestCheckRequestSeeds(t *testing.T) {
	for _, tc := range []struct {
		raw, params, problem string
	}{
		{checkRequestSeeds[1], `{"deps":[{"pm":"npm","name":"x]}","version":"1"}]}`, ""},
		{checkRequestSeeds[2], `[ 1 , { } , "\\" ]`, ""},
		{checkRequestSeeds[3], ``, ""},
		{checkRequestSeeds[4], `[2]`, ""},
		{checkRequestSeeds[5], ``, `"id" must be a string or a number, not an object`},
		{checkRequestSeeds[6], `{"k":"v"}`, ""},
		{checkRequestSeeds[7], ``, `unknown member "alpha" in the request (a request has only jsonrpc, id, method and params)`},
	} {
		c := checkRequest(json.RawMessage(tc.raw))
		if string(c.params) != tc.params || c.problem != tc.problem {
			t.Errorf("%s: params %s, problem %q; want %s, %q", tc.raw, c.params, c.problem, tc.params, tc.problem)
		}
	}
	for _, s := range checkRequestSeeds {
		if got, want := checkRequest(json.RawMessage(s)), checkRequestByMap(json.RawMessage(s)); fmt.Sprint(got) != fmt.Sprint(want) {
			t.Errorf("%s:\n got %+v\nwant %+v", s, got, want)
		}
	}
}
