package suite

import "fmt"

// validateCost checks a deployment's prices, written at path ("cost", or a
// variant's).
func validateCost(path string, c *Cost) []*FieldError {
	var errs []*FieldError
	if c.USDPerHour < 0 || c.Watts < 0 || c.USDPerKWh < 0 || c.OpsOverheadPct < 0 {
		errs = append(errs, &FieldError{Path: path, Msg: "costs must not be negative"})
	}
	if c.GPUs < 1 {
		errs = append(errs, &FieldError{Path: JoinPath(path, "gpus"), Msg: fmt.Sprintf("must be at least 1, got %d", c.GPUs)})
	}
	return errs
}
