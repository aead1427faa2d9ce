package workload

import "github.com/benchci/benchci/framework/suite"

// Check reads a suite's data files as a run reads them (LoadTrace,
// LoadDataset, files of lengths, images), with the same bounds and the
// same errors, and builds its request generator as a run does, without a
// server. It keeps nothing of a trace, a dataset or a file of lengths:
// its memory does not grow with theirs, so `benchci validate` of a file
// that a run refuses stops at the line that passed a bound, and one that
// a run accepts is read through in a few megabytes.
func Check(s *suite.Suite) error {
	w := s.Workload
	if w.Arrival.Kind == suite.ArrivalTrace {
		if err := CheckTrace(w.Arrival.Path); err != nil {
			return err
		}
	}
	if w.Prompts.Kind.Dataset() {
		// As NewGenerator: entries must record their output length when
		// the workload does not draw one.
		if err := CheckDataset(w.Prompts.Kind, w.Prompts.Path, w.OutputTokens.Kind == ""); err != nil {
			return err
		}
	}
	_, err := newGenerator(w, Sources{NoOutput: s.API == suite.APIEmbeddings}, true)
	return err
}
