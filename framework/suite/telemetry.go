package suite

// TelemetryNames lists the telemetry endpoints' names in the suite's
// order: the prefixes of their figures in a point ("dcgm.power_mean_w"),
// and the order in which pricing looks for a measured power.
func (s *Suite) TelemetryNames() []string {
	names := make([]string, len(s.Telemetry))
	for i, t := range s.Telemetry {
		names[i] = t.Name
	}
	return names
}
