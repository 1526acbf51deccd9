package protocol

import (
	"encoding/json"
	"errors"
	"fmt"
)

// Code is a JSON-RPC error code.
type Code int

// Standard JSON-RPC 2.0 error codes.
const (
	CodeParseError     Code = -32700
	CodeInvalidRequest Code = -32600
	CodeMethodNotFound Code = -32601
	CodeInvalidParams  Code = -32602
	CodeInternalError  Code = -32603
)

// Application error codes of protocol version 1.
const (
	// CodeNotInitialized answers any method sent before initialize.
	CodeNotInitialized Code = -32002
	// CodeNotFound: no such package, or no version satisfies the requirement.
	CodeNotFound Code = -32010
	// CodeOffline: update "none" and the content is not cached.
	CodeOffline Code = -32011
	// CodeRegistry: a registry or network failure; retrying may help.
	CodeRegistry Code = -32012
	// CodeIntegrity: a checksum or signature mismatch; nothing was cached.
	CodeIntegrity Code = -32013
	// CodeInvalidContent: a corrupt archive, an unsafe path, oversize content.
	CodeInvalidContent Code = -32014
	// CodeForeignID: the id belongs to another PM, or is malformed.
	CodeForeignID Code = -32015
)

var codeNames = map[Code]string{
	CodeParseError:     "parse error",
	CodeInvalidRequest: "invalid request",
	CodeMethodNotFound: "method not found",
	CodeInvalidParams:  "invalid params",
	CodeInternalError:  "internal error",
	CodeNotInitialized: "not initialized",
	CodeNotFound:       "not found",
	CodeOffline:        "offline",
	CodeRegistry:       "registry failure",
	CodeIntegrity:      "integrity failure",
	CodeInvalidContent: "invalid package content",
	CodeForeignID:      "foreign or malformed id",
}

// String names the code in words.
func (c Code) String() string {
	if s, ok := codeNames[c]; ok {
		return s
	}
	return fmt.Sprintf("error %d", int(c))
}

// Error is a protocol error: what a handler returns to have a specific code
// and data sent to the host, and what the host receives.
type Error struct {
	Code    Code   `json:"code"`
	Message string `json:"message"`
	// Data is the code's structured detail (see the Data types below), or nil.
	Data json.RawMessage `json:"data,omitempty"`
}

// Error returns the message.
func (e *Error) Error() string { return e.Message }

// DecodeData unmarshals the error's data into v.
func (e *Error) DecodeData(v any) error {
	if len(e.Data) == 0 {
		return fmt.Errorf("error %d carries no data", e.Code)
	}
	return json.Unmarshal(e.Data, v)
}

// NewError returns an *Error with the given code, message and data. Data that
// cannot be marshaled is dropped.
func NewError(code Code, data any, format string, args ...any) *Error {
	e := &Error{Code: code, Message: fmt.Sprintf(format, args...)}
	if data != nil {
		if b, err := json.Marshal(data); err == nil {
			e.Data = b
		}
	}
	return e
}

// CodeOf returns the protocol code carried by err, or 0 when err is not (and
// does not wrap) an *Error.
func CodeOf(err error) Code {
	var e *Error
	if errors.As(err, &e) {
		return e.Code
	}
	return 0
}

// IDData is the data of CodeNotFound, CodeOffline and CodeForeignID.
type IDData struct {
	ID PackageID `json:"id"`
}

// RegistryData is the data of CodeRegistry.
type RegistryData struct {
	ID     *PackageID `json:"id,omitempty"`
	URL    string     `json:"url,omitempty"`
	Status int        `json:"status,omitempty"`
}

// IntegrityData is the data of CodeIntegrity.
type IntegrityData struct {
	ID       PackageID `json:"id"`
	Expected string    `json:"expected"`
	Actual   string    `json:"actual"`
}

// ContentData is the data of CodeInvalidContent.
type ContentData struct {
	ID     PackageID `json:"id"`
	Detail string    `json:"detail"`
}

// ErrNotFound reports that no package or version matches id.
func ErrNotFound(id PackageID, format string, args ...any) *Error {
	return NewError(CodeNotFound, IDData{ID: id}, format, args...)
}

// ErrOffline reports that id is not available without the network.
func ErrOffline(id PackageID) *Error {
	return NewError(CodeOffline, IDData{ID: id},
		"%s is not cached and update level %q forbids the network", id, UpdateNone)
}

// ErrRegistry reports a registry or network failure. url must not carry
// credentials; status is the HTTP status, or 0.
func ErrRegistry(id *PackageID, url string, status int, format string, args ...any) *Error {
	return NewError(CodeRegistry, RegistryData{ID: id, URL: url, Status: status}, format, args...)
}

// ErrIntegrity reports a checksum mismatch for id.
func ErrIntegrity(id PackageID, expected, actual string) *Error {
	return NewError(CodeIntegrity, IntegrityData{ID: id, Expected: expected, Actual: actual},
		"%s: checksum mismatch: registry says %s, download has %s; nothing was cached", id, expected, actual)
}

// ErrInvalidContent reports unusable package content for id.
func ErrInvalidContent(id PackageID, detail string) *Error {
	return NewError(CodeInvalidContent, ContentData{ID: id, Detail: detail},
		"%s: invalid package content: %s", id, detail)
}

// ErrForeignID reports an id that names another PM or is malformed.
func ErrForeignID(id PackageID, format string, args ...any) *Error {
	return NewError(CodeForeignID, IDData{ID: id}, format, args...)
}
