package variants

import (
	"encoding/json"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"slices"
	"strings"

	"github.com/benchci/benchci/framework/result"
)

// MaxVariants bounds the variants a comparison file may list: a suite
// runs a handful, and each is a results file read in full.
const MaxVariants = 256

// Read reads a comparison written by run (<suite>.variants.json) through
// the results files' bounded reader, and checks it is one: its schema,
// at most MaxVariants variants, each naming its results file.
func Read(path string) (*Report, error) {
	data, err := result.ReadBytes(path)
	if err != nil {
		return nil, fmt.Errorf("read variants comparison: %w", err)
	}
	if err := result.CheckShape(data); err != nil {
		return nil, fmt.Errorf("read variants comparison %s: %w", path, err)
	}
	var r Report
	if err := json.Unmarshal(data, &r); err != nil {
		return nil, fmt.Errorf("read variants comparison %s: not valid JSON (truncated or corrupt?): %w", path, err)
	}
	if r.Schema != Schema {
		return nil, fmt.Errorf("read variants comparison %s: schema %q, want %q", path, r.Schema, Schema)
	}
	if n := len(r.Variants); n == 0 || n > MaxVariants {
		return nil, fmt.Errorf("read variants comparison %s: %d variants, want 1 to %d", path, n, MaxVariants)
	}
	for _, v := range r.Variants {
		if v.Path == "" {
			return nil, fmt.Errorf("read variants comparison %s: variant %q names no results file", path, v.Name)
		}
	}
	return &r, nil
}

// ResultsPath is where variant v's results file is: the path the
// comparison recorded (relative to where the suite ran), or else the same
// file under the comparison's directory (<dir>/<suite>/<variant>.json, or
// <dir>/<name>.json), as when a CI artifact's results directory was
// downloaded elsewhere. When none exists, the error names every place
// it looked.
func ResultsPath(comparison string, v Variant) (string, error) {
	dir := filepath.Dir(comparison)
	tried := []string{}
	for _, p := range []string{v.Path,
		filepath.Join(dir, filepath.Base(filepath.Dir(v.Path)), filepath.Base(v.Path)),
		filepath.Join(dir, filepath.Base(v.Path))} {
		p = filepath.Clean(p)
		if slices.Contains(tried, p) {
			continue
		}
		tried = append(tried, p)
		_, err := os.Stat(p)
		if err == nil {
			return p, nil
		}
		if !errors.Is(err, fs.ErrNotExist) {
			return p, fmt.Errorf("variant %s's results file: %w", v.Name, err)
		}
	}
	err := fmt.Errorf("variant %s's results file is missing: %s, as %s records it, does not exist", v.Name, v.Path, filepath.Base(comparison))
	if len(tried) > 1 {
		err = fmt.Errorf("%w (nor %s)", err, strings.Join(tried[1:], ", "))
	}
	return v.Path, err
}
