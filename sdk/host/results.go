package host

import (
	"encoding/json"

	"github.com/symposium-dev/symposium-pm/sdk/jsonscan"
	"github.com/symposium-dev/symposium-pm/sdk/protocol"
)

// decodeChecked decodes raw, a result the channel has already checked to
// be valid JSON (see clientChannel.inPlace), into result, as json.Unmarshal
// does. The two results a hook's answers are made of, a list of package ids
// (list_deps) and a list of offers (active_plugins), are read without
// encoding/json's reflection and its second validation pass when they are
// written plainly: every member named exactly, without escapes, and once,
// and every id's member a string or null. Anything else (a member named in
// other case, a repeat, an unknown member, a value of another type) goes
// to json.Unmarshal, which decodes it or says why not. The offers'
// manifests are kept as written, sharing raw's memory.
func decodeChecked(raw []byte, result any) error {
	switch r := result.(type) {
	case *[]protocol.Offer:
		if offers, ok := decodeOffers(raw); ok {
			*r = offers
			return nil
		}
	case *[]protocol.PackageID:
		if ids, ok := decodeIDs(raw); ok {
			*r = ids
			return nil
		}
	}
	return json.Unmarshal(raw, result)
}

// decodeIDs is decodeChecked's fast path for a list of package ids.
func decodeIDs(raw []byte) ([]protocol.PackageID, bool) {
	var ids []protocol.PackageID
	ok := jsonscan.Elements(raw, func(v json.RawMessage) bool {
		id, ok := decodeID(v)
		ids = append(ids, id)
		return ok
	})
	if ok && ids == nil {
		ids = []protocol.PackageID{}
	}
	return ids, ok
}

// decodeOffers is decodeChecked's fast path for a list of offers.
func decodeOffers(raw []byte) ([]protocol.Offer, bool) {
	var offers []protocol.Offer
	ok := jsonscan.Elements(raw, func(v json.RawMessage) bool {
		var of protocol.Offer
		var seen uint8
		good := true
		isObject := jsonscan.RawMembers(v, func(name []byte, value json.RawMessage) {
			var bit uint8
			switch string(name) {
			case `"id"`:
				bit = 1
				var ok bool
				of.ID, ok = decodeID(value)
				good = good && ok
			case `"root"`:
				bit = 2
				var ok bool
				of.Root, ok = jsonscan.DecodeString(value)
				good = good && ok
			case `"manifest"`:
				bit = 4
				of.Manifest = value
			default:
				good = false
			}
			good = good && seen&bit == 0
			seen |= bit
		})
		offers = append(offers, of)
		return isObject && good
	})
	if ok && offers == nil {
		offers = []protocol.Offer{}
	}
	return offers, ok
}

// decodeID decodes a package id written plainly: an object whose members
// are among "pm", "name" and "version", once each, strings or null.
func decodeID(raw []byte) (protocol.PackageID, bool) {
	var id protocol.PackageID
	var seen uint8
	good := true
	isObject := jsonscan.RawMembers(raw, func(name []byte, value json.RawMessage) {
		var bit uint8
		var dst *string
		switch string(name) {
		case `"pm"`:
			bit, dst = 1, &id.PM
		case `"name"`:
			bit, dst = 2, &id.Name
		case `"version"`:
			bit, dst = 4, &id.Version
		default:
			good = false
			return
		}
		var ok bool
		*dst, ok = jsonscan.DecodeString(value)
		good = good && ok && seen&bit == 0
		seen |= bit
	})
	return id, isObject && good
}
