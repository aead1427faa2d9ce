package metric

// Telemetry figure names, as a point records them after the endpoint's
// name and a dot ("dcgm.power_mean_w"): the hardware exporters' figures
// (package telemetry writes them) that pricing and reports read back.
const (
	TelemetryGPUs       = "gpus"
	TelemetryUtilMean   = "gpu_util_mean_pct"
	TelemetryUtilPeak   = "gpu_util_peak_pct"
	TelemetryMemoryPeak = "gpu_memory_used_peak_mib"
	TelemetryPowerMean  = "power_mean_w"
	TelemetryPowerPeak  = "power_peak_w"
	TelemetryEnergy     = "energy_j"
	// TelemetryEnergyCounted is 1 when TelemetryEnergy came from the
	// energy counter, 0 from power x time.
	TelemetryEnergyCounted = "energy_counted"
)

// What one exporter can plausibly serve: a telemetry figure beyond these
// is not a measurement. The scraper drops it, and pricing, which may read
// figures from a results file, refuses it too.
const (
	// MaxGPUWatts bounds one GPU's power draw. The largest accelerators'
	// board power is about 1,000 to 1,400 W (NVIDIA B200 1,000 W, AMD
	// MI355X 1,400 W); 2,000 W leaves room for the next ones, and none
	// draws 0 W or less while it is up.
	MaxGPUWatts = 2000
	// MaxGPUs bounds the GPUs one exporter serves: it watches one machine,
	// and the largest carry 8 to 16 (a rack of 72 is 18 machines, each
	// with its exporter).
	MaxGPUs = 1024
)

// TelemetryKey is the name under which a point records an endpoint's
// figure: "dcgm" and TelemetryPowerMean give "dcgm.power_mean_w".
func TelemetryKey(endpoint, figure string) string { return endpoint + "." + figure }

// ServerPrefixCacheHitRate is the engine's own share of prompt tokens its
// prefix cache served over a point (point.server, package engine writes
// it): the gate reads it to tell a warm server from a faster one.
const ServerPrefixCacheHitRate = "prefix_cache_hit_rate"
