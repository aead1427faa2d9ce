package cost

import (
	"math"
	"strings"
	"testing"
)

func TestPerMillion(t *testing.T) {
	t.Parallel()
	tests := []struct {
		name string
		c    Deployment
		tps  float64
		want float64
	}{
		// $3.60/h at 1000 tok/s: 3.6M tokens per hour cost $3.60 -> $1 per 1M.
		{"gpu only", Deployment{USDPerHour: 3.6, GPUs: 1}, 1000, 1},
		{"two gpus", Deployment{USDPerHour: 3.6, GPUs: 2}, 1000, 2},
		// energy: 1000 W x $0.36/kWh = $0.36/h on top of $3.24/h.
		{"energy", Deployment{USDPerHour: 3.24, GPUs: 1, Watts: 1000, USDPerKWh: 0.36}, 1000, 1},
		{"ops overhead", Deployment{USDPerHour: 3.6, GPUs: 1, OpsOverheadPct: 25}, 1000, 1.25},
		{"nothing produced", Deployment{USDPerHour: 3.6, GPUs: 1}, 0, 0},
	}
	for _, tt := range tests {
		if got := PerMillion(tt.c, nil, tt.tps); math.Abs(got-tt.want) > 1e-9 {
			t.Errorf("%s: $%v per 1M, want $%v", tt.name, got, tt.want)
		}
	}
	p, err := At(Deployment{USDPerHour: 3.6, GPUs: 1}, nil, 1000, 4000)
	if err != nil || p.PerMOutput != 1 || p.PerMTotal != 0.25 || p.USDPerHour != 3.6 {
		t.Errorf("At = %+v", p)
	}
}

// Measured power replaces watts x gpus in the energy term, and the cost
// says which priced it.
func TestMeasuredPower(t *testing.T) {
	c := Deployment{USDPerHour: 2, GPUs: 4, Watts: 700, USDPerKWh: 0.5}
	fixed, _ := At(c, nil, 1000, 2000)
	if want := 2*4 + 0.7*4*0.5; math.Abs(fixed.USDPerHour-want) > 1e-9 || fixed.Energy != "fixed: 700 W x 4 GPUs" {
		t.Errorf("fixed: %+v, want $%v/h", fixed, want)
	}
	measured, _ := At(c, &Power{Watts: 1300, Source: "dcgm, 4 GPUs"}, 1000, 2000)
	if want := 2*4 + 1.3*0.5; math.Abs(measured.USDPerHour-want) > 1e-9 || measured.Energy != "measured: 1300 W (dcgm, 4 GPUs)" {
		t.Errorf("measured: %+v, want $%v/h", measured, want)
	}
	if none, _ := At(Deployment{USDPerHour: 2, GPUs: 1}, nil, 1000, 2000); none.Energy != "" {
		t.Errorf("no energy price, yet %q", none.Energy)
	}
}

// N7: an exporter serving 1000 GPUs at 1999 W each, for a deployment of
// 2, prices the energy of 2 GPUs, not a thousand.
func TestMeasuredPowerIsPerTheSuitesGPUs(t *testing.T) {
	c := &Deployment{USDPerHour: 2, GPUs: 2, USDPerKWh: 0.5}
	p := measuredPower(c, []string{"dcgm"}, map[string]float64{"dcgm.power_mean_w": 1999 * 1000, "dcgm.gpus": 1000})
	if p == nil || math.Abs(p.Watts-2*1999) > 1e-6 || !strings.Contains(p.Source, "priced for the suite's 2") {
		t.Fatalf("power %+v, want 3998 W for the suite's 2 GPUs", p)
	}
	same := measuredPower(c, []string{"dcgm"}, map[string]float64{"dcgm.power_mean_w": 800, "dcgm.gpus": 2})
	if same == nil || same.Watts != 800 || same.Source != "dcgm, 2 GPUs" {
		t.Errorf("an exporter of the suite's own GPUs: %+v", same)
	}
}
