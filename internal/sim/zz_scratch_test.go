package sim

import (
	"fmt"
	"testing"
)

func TestZZScratch(t *testing.T) {
	cv, _ := CrossValidate(References)
	cs, err := CheckOpenLoop(cv, OpenLoopReferences)
	if err != nil {
		t.Fatal(err)
	}
	fmt.Println("OPEN", OpenLoopSummary(cs))
	fmt.Println("HEAD", cv.Summary())
	for _, c := range cv.Checked {
		if c.Source == srcNIM {
			fmt.Printf("NIM %s ttft %+.0f%% tpot %+.0f%% tput %+.0f%%\n", c.Test, 100*c.Errors["ttft"], 100*c.Errors["tpot"], 100*c.Errors["throughput"])
		}
	}
	for _, f := range cv.Folds {
		if f.Engine == "trtllm" {
			fmt.Println("FOLD", f.Source[:30], f.Overhead, f.InSample)
		}
	}
}
