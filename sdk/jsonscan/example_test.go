package jsonscan_test

import (
	"encoding/json"
	"fmt"

	"github.com/symposium-dev/symposium-pm/sdk/jsonscan"
)

// Example checks an active_plugins answer once with Valid, then reads the
// root of each offer in place: Elements hands over each offer as written,
// RawMembers each member with its name as written, and only the value of
// "root" is decoded.
func Example() {
	answer := []byte(`[
		{"id": {"pm": "npm", "name": "left-pad", "version": "1.3.0"}, "root": "/w/node_modules/left-pad"},
		{"id": {"pm": "npm", "name": "chalk", "version": "5.3.0"}, "root": "/w/node_modules/chalk"}
	]`)
	if !jsonscan.Valid(answer) {
		fmt.Println("not JSON")
		return
	}
	isArray := jsonscan.Elements(answer, func(offer json.RawMessage) bool {
		root, found := "", false
		isObject := jsonscan.RawMembers(offer, func(name []byte, value json.RawMessage) {
			if string(name) == `"root"` {
				root, found = jsonscan.DecodeString(value)
			}
		})
		if isObject && found {
			fmt.Println(root)
		}
		return isObject && found // anything else stops the walk
	})
	fmt.Println("an array of offers:", isArray)
	fmt.Println("truncated:", jsonscan.Valid(answer[:len(answer)-1]))
	// Output:
	// /w/node_modules/left-pad
	// /w/node_modules/chalk
	// an array of offers: true
	// truncated: false
}

// ExampleMembers reads an object's members with their names decoded.
func ExampleMembers() {
	msg := []byte(`{"jsonrpc": "2.0", "id": 7, "result": {"deps": []}}`)
	isObject := jsonscan.Members(msg, func(name string, value json.RawMessage) {
		fmt.Printf("%s = %s\n", name, value)
	})
	fmt.Println("an object:", isObject)
	// Output:
	// jsonrpc = "2.0"
	// id = 7
	// result = {"deps": []}
	// an object: true
}

// ExampleAppendString encodes strings as json.Marshal does.
func ExampleAppendString() {
	b := []byte(`{"name":`)
	b = jsonscan.AppendString(b, `say "hi"`)
	b = append(b, `,"html":`...)
	b = jsonscan.AppendString(b, "<b>")
	b = append(b, '}')
	fmt.Println(string(b))
	// Output: {"name":"say \"hi\"","html":"\u003cb\u003e"}
}
