package suite

import "strings"

// FieldError is one problem with one field of a suite.
type FieldError struct {
	// Pos is where the field (or its nearest written ancestor) is in the
	// source, as file:line:col; empty when unknown.
	Pos string
	// Path is the field's path, e.g. "sweep.rates[2]".
	Path string
	Msg  string
	// Line and Col are Pos's line and column (0 when unknown), for ordering.
	Line, Col int
}

func (e *FieldError) Error() string {
	var b strings.Builder
	if e.Pos != "" {
		b.WriteString(e.Pos)
		b.WriteString(": ")
	}
	if e.Path != "" {
		b.WriteString(e.Path)
		b.WriteString(": ")
	}
	b.WriteString(e.Msg)
	return b.String()
}
