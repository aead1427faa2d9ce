package errjoin

import (
	"errors"
	"fmt"
	"io"
	"os"
	"testing"

	"github.com/hashicorp/go-multierror"
)

type codeError struct{ code int }

func (e *codeError) Error() string { return fmt.Sprintf("code %d", e.code) }

func TestJoinPrintsAsErrorsJoin(t *testing.T) {
	a, b := errors.New("first"), fmt.Errorf("second: %w", io.EOF)
	for _, errs := range [][]error{
		{a},
		{a, b},
		{nil, a, nil, b},
		{errors.New("two\nlines"), a},
	} {
		got, want := Join(errs...), errors.Join(errs...)
		if got.Error() != want.Error() {
			t.Errorf("Join(%q) = %q, errors.Join says %q", errs, got, want)
		}
		var me *multierror.Error
		if !errors.As(got, &me) {
			t.Errorf("Join(%q) is a %T, not a *multierror.Error", errs, got)
		}
	}
}

func TestJoinNilWhenNothingFailed(t *testing.T) {
	if err := Join(); err != nil {
		t.Errorf("Join() = %v, want nil", err)
	}
	if err := Join(nil, nil); err != nil {
		t.Errorf("Join(nil, nil) = %v, want nil", err)
	}
}

func TestJoinFindsEveryError(t *testing.T) {
	err := Join(errors.New("plain"), fmt.Errorf("wrapped: %w", &codeError{2}), os.ErrNotExist)
	var ce *codeError
	if !errors.As(err, &ce) || ce.code != 2 {
		t.Errorf("errors.As found %v in %q, want code 2", ce, err)
	}
	if !errors.Is(err, os.ErrNotExist) {
		t.Errorf("errors.Is(%q, os.ErrNotExist) = false", err)
	}
}

func TestJoinKeepsANestedListWhole(t *testing.T) {
	inner := multierror.Append(nil, errors.New("a"), errors.New("b"))
	inner.ErrorFormat = func(es []error) string { return fmt.Sprintf("suite.jsonnet: %d problem(s):\n  a\n  b", len(es)) }
	err := Join(inner, errors.New("other.jsonnet: bad"))
	want := "suite.jsonnet: 2 problem(s):\n  a\n  b\nother.jsonnet: bad"
	if err.Error() != want {
		t.Errorf("Join = %q, want %q", err, want)
	}
}
