package protocol

import (
	"bytes"
	_ "embed" // the schema file
)

// SchemaID is the $id of the protocol's JSON Schema.
const SchemaID = "https://raw.githubusercontent.com/symposium-dev/symposium-pm/main/docs/protocol.schema.json"

//go:embed protocol.schema.json
var schemaJSON []byte

// SchemaJSON returns the JSON Schema (draft 2020-12) of protocol version 1:
// every request with its params, every response with its result, the error
// object with each code's data, and a manifest's wire form, in $defs named
// after the Go types of this package (PackageID, Offer, InitializeResult, …),
// <Method>Request and <Method>Response for the messages (Method in
// CamelCase), and Manifest for the manifest. It is the repository's
// docs/protocol.schema.json, of which this package keeps an identical copy.
func SchemaJSON() []byte { return bytes.Clone(schemaJSON) }
