package report

import "fmt"

// Figure formats a value in its catalogue unit.
func Figure(v float64, unit string) string {
	switch unit {
	case "ms":
		return Ms(v)
	case "tok/s":
		return fmt.Sprintf("%.0f tok/s", v)
	case "req/s":
		return Plain(v, 3) + " req/s"
	case "$/1M out":
		return fmt.Sprintf("$%.3f", v)
	case "fraction":
		return fmt.Sprintf("%.2f%%", 100*v)
	}
	return Num(v)
}
