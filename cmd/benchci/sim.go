package main

import (
	"fmt"
	"strings"
	"time"

	"github.com/spf13/cobra"

	"github.com/benchci/benchci/framework/sim"
)

func simCmd() *cobra.Command {
	var addr, profile string
	var maxSeqs, maxTokens int
	var stepBase, decodePerSeq time.Duration
	cmd := &cobra.Command{
		Use:   "sim",
		Short: "Serve the simulator over the OpenAI API for other clients",
		Long: `sim serves the embedded continuous-batching simulator on an OpenAI-compatible
API (/v1/completions, /v1/chat/completions, /v1/models, /health) until
interrupted, so other benchmark clients can be compared against benchci on
the same known server.`,
		Args: cobra.NoArgs,
		RunE: func(cmd *cobra.Command, args []string) error {
			p, ok := sim.Lookup(profile)
			if !ok {
				return &exitError{exitUsage, fmt.Errorf("parsing --profile: unknown profile %q (known: %s)", profile, strings.Join(sim.ProfileNames(), ", "))}
			}
			if maxSeqs > 0 {
				p.MaxNumSeqs = maxSeqs
			}
			if maxTokens > 0 {
				p.MaxBatchedTokens = maxTokens
			}
			if stepBase > 0 {
				p.StepBase = stepBase
			}
			if decodePerSeq >= 0 {
				p.DecodePerSeq = decodePerSeq
			}
			ctx := cmd.Context()
			u, err := sim.New(p).Listen(ctx, addr)
			if err != nil {
				return err
			}
			fmt.Fprintf(cmd.OutOrStdout(), "serving simulator profile %s (model %q) at %s; Ctrl-C stops\n", p.Name, p.Model, u)
			<-ctx.Done()
			return nil
		},
	}
	cmd.Flags().StringVar(&addr, "addr", "127.0.0.1:8000", "address to listen on (port 0: any free port)")
	cmd.Flags().IntVar(&maxSeqs, "max-num-seqs", 0, "override the profile's max_num_seqs")
	cmd.Flags().IntVar(&maxTokens, "max-batched-tokens", 0, "override the profile's max_batched_tokens")
	cmd.Flags().DurationVar(&stepBase, "step-base", 0, "override the profile's step_base")
	cmd.Flags().DurationVar(&decodePerSeq, "decode-per-seq", -1, "override the profile's decode_per_seq")
	cmd.Flags().StringVar(&profile, "profile", "llama3-8b-h100", "simulator profile ("+strings.Join(sim.ProfileNames(), ", ")+")")
	return cmd
}
