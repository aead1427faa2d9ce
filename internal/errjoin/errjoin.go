// Package errjoin gathers several errors into one the single way benchci
// does: a *multierror.Error (hashicorp/go-multierror, the design card's
// choice), printed one error a line, as errors.Join printed them, so that
// the messages people and golden files read stay as they were.
package errjoin

import (
	"strings"

	"github.com/hashicorp/go-multierror"
)

// Join returns the non-nil errs as one *multierror.Error, or nil when there
// are none. An err that is itself a *multierror.Error is kept whole, with
// its own format (a suite file's "path: N problem(s):" header), where
// multierror.Append would flatten it into its parts.
func Join(errs ...error) error {
	me := &multierror.Error{ErrorFormat: Lines}
	for _, err := range errs {
		if err != nil {
			me.Errors = append(me.Errors, err)
		}
	}
	return me.ErrorOrNil()
}

// Lines is the multierror.ErrorFormatFunc that prints each error on its own
// line, nothing before or after.
func Lines(errs []error) string {
	msgs := make([]string, len(errs))
	for i, err := range errs {
		msgs[i] = err.Error()
	}
	return strings.Join(msgs, "\n")
}
